"""The learning curve as a picture: masked-LM accuracy and loss against steps, train and held-out.

Drawn with matplotlib's Agg canvas directly (no pyplot), so writing a PNG never changes the
global backend of a notebook or needs a display. The values come from what a run logged: a list
of `{"step": ..., "train/mlm_accuracy": ..., "eval/mlm_loss": ...}` dicts, or the TensorBoard
scalars the train loop wrote under `output_dir/train` and `output_dir/eval` (`read_history`).
"""

import collections
import glob
import os

import tensorflow as tf
from tensorflow.core.util import event_pb2

from bert_tf.errors import UserError

# (panel title, metric name), left to right.
PANELS = (("masked-LM accuracy", "mlm_accuracy"), ("masked-LM loss", "mlm_loss"))
SPLITS = (("train", "train"), ("eval", "held-out"))  # (key prefix, legend label)


class LearningCurveError(UserError, ValueError):
    """Nothing to plot: the history has no masked-LM values."""


def read_history(output_dir):
    """The scalars a training run logged to TensorBoard in `output_dir`, one dict per step.

    Reads the event files under `output_dir/train` and `output_dir/eval` (what
    `training.train_loop.run_training` writes); a value logged twice for the same step (a
    resumed run) keeps the later one.

    Returns:
      `[{"step": 100, "train/loss": ..., "train/mlm_accuracy": ..., "eval/mlm_loss": ...}]`,
      sorted by step; eval keys only at the steps that were evaluated.
    """
    logged = []  # (wall time, step, key, value)
    for split, _ in SPLITS:
        for path in glob.glob(os.path.join(output_dir, split, "events.out.tfevents.*")):
            for record in tf.data.TFRecordDataset(path):
                event = event_pb2.Event.FromString(record.numpy())
                logged.extend((event.wall_time, int(event.step), f"{split}/{value.tag}",
                               float(tf.make_ndarray(value.tensor)))
                              for value in event.summary.value)
    by_step = collections.defaultdict(dict)
    for _, step, key, value in sorted(logged, key=lambda item: item[0]):  # later runs win
        by_step[step][key] = value
    return [{"step": step, **values} for step, values in sorted(by_step.items())]


def _series(history, key):
    points = [(entry["step"], entry[key]) for entry in history if key in entry]
    return [step for step, _ in points], [value for _, value in points]


def write_learning_curve(history, path, baseline=None, title="BERT pretraining"):
    """Writes a PNG of masked-LM accuracy (left) and loss (right) against steps.

    Args:
      history: list of dicts with `step` and any of `train/mlm_accuracy`, `eval/mlm_accuracy`,
        `train/mlm_loss`, `eval/mlm_loss` (e.g. from `read_history`); other keys are ignored.
      path: the PNG to write (its folder must exist).
      baseline: the held-out unigram-baseline accuracy, drawn as a dashed line, or None.
      title: the figure's title.

    Raises:
      LearningCurveError: no masked-LM value in `history`.

    Example:
    >>> write_learning_curve(read_history(output_dir),  # doctest: +SKIP
    ...                      os.path.join(output_dir, "learning_curve.png"), baseline=0.075)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    keys = [f"{split}/{metric}" for split, _ in SPLITS for _, metric in PANELS]
    if not any(key in entry for entry in history for key in keys):
        raise LearningCurveError(
            f"Cannot draw {path}: the history has none of {', '.join(keys)} (got "
            f"{len(history)} entries); log masked-LM metrics during training.")
    figure = Figure(figsize=(10, 4), dpi=100)
    FigureCanvasAgg(figure)
    for column, (panel, metric) in enumerate(PANELS):
        axes = figure.add_subplot(1, len(PANELS), column + 1)
        for split, label in SPLITS:
            steps, values = _series(history, f"{split}/{metric}")
            if steps:
                axes.plot(steps, values, marker="o" if split == "eval" else None,
                          markersize=4, label=label)
        if metric == "mlm_accuracy" and baseline is not None:
            axes.axhline(baseline, linestyle="--", color="gray", label="unigram baseline")
        axes.set_title(panel)
        axes.set_xlabel("step")
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle(title)
    figure.tight_layout()
    # No "Software" text chunk: the same values give the same bytes on any matplotlib.
    figure.savefig(path, format="png", metadata={"Software": None})
    return path
