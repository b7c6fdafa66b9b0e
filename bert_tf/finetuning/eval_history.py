"""`output_dir/eval_history.json`: one entry per finished epoch, so a rerun skips what is done.

Each entry is `{"epoch", "step", "train_seconds", "metrics"?, "best"?}`; `best` marks the
epochs written to `output_dir/model/`.
"""

import json
import os

import tensorflow as tf

from bert_tf.finetuning.table_reader import DataError

HISTORY_FILE = "eval_history.json"


def load_history(output_dir):
    """The entries saved in `output_dir`, or [] for a new run.

    Raises:
      DataError: the file is not the JSON list this module writes.
    """
    path = os.path.join(output_dir, HISTORY_FILE)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as f:
        text = f.read()
    try:
        history = json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); delete it to "
                        "evaluate every epoch again.") from None
    if not isinstance(history, list):
        raise DataError(f"{path}: expected a list of epochs; delete it to evaluate every epoch "
                        "again.")
    return history


def save_history(output_dir, history):
    with tf.io.gfile.GFile(os.path.join(output_dir, HISTORY_FILE), "w") as f:
        json.dump(history, f, indent=2)


def best_metric(history, metric):
    """The highest `metric` of the evaluated epochs in `history`, or -inf."""
    return max((entry["metrics"][metric] for entry in history if "metrics" in entry),
               default=-float("inf"))
