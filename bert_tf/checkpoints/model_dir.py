"""The model directory: `bert_config.json`, `vocab.txt` and an object-based TF checkpoint.

Conversion, pretraining and fine-tuning all write this layout; every loader reads it.
The checkpoint holds the encoder under the key `encoder` and task heads beside it.
"""

import json
import os
import shutil

import tensorflow as tf

from bert_tf.configs import BertConfig

CONFIG_NAME = "bert_config.json"
VOCAB_NAME = "vocab.txt"
CHECKPOINT_PREFIX = "model.ckpt"
EXTRA_NAME = "model_info.json"


def read_config(model_dir):
    """Reads the `BertConfig` of a model directory."""
    return BertConfig.from_json_file(os.path.join(model_dir, CONFIG_NAME))


def vocab_path(model_dir):
    return os.path.join(model_dir, VOCAB_NAME)


def model_checkpoint_path(model_dir):
    """The checkpoint prefix in `model_dir`: `model.ckpt`, else the newest CheckpointManager one."""
    prefix = os.path.join(model_dir, CHECKPOINT_PREFIX)
    if tf.io.gfile.exists(prefix + ".index"):
        return prefix
    latest = tf.train.latest_checkpoint(model_dir)
    if latest is None:
        raise FileNotFoundError(
            f"No checkpoint in model directory {model_dir}: expected {CHECKPOINT_PREFIX}.index "
            "(written by tools/convert_checkpoint.py or a training run).")
    return latest


def write_model_dir(model_dir, config, vocab_file=None, info=None, **objects):
    """Writes config, vocab and a checkpoint of `objects` (e.g. `encoder=..., head=...`).

    Args:
      model_dir: destination folder, created if missing.
      config: the `BertConfig` of the encoder.
      vocab_file: a WordPiece vocab to copy in, or None.
      info: JSON-serializable extras (e.g. `{"task": "classifier", "label_names": [...]}`).
      **objects: trackables to save, keyed by checkpoint name; `encoder` is required.

    Returns:
      The checkpoint prefix that was written.
    """
    if "encoder" not in objects:
        raise ValueError("write_model_dir needs `encoder=`: the model directory's checkpoint "
                         "holds the encoder under the key `encoder`.")
    tf.io.gfile.makedirs(model_dir)
    config.to_json_file(os.path.join(model_dir, CONFIG_NAME))
    if vocab_file is not None and os.path.abspath(vocab_file) != os.path.abspath(vocab_path(model_dir)):
        shutil.copyfile(vocab_file, vocab_path(model_dir))
    if info is not None:
        with open(os.path.join(model_dir, EXTRA_NAME), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=2, sort_keys=True)
    return tf.train.Checkpoint(**objects).write(os.path.join(model_dir, CHECKPOINT_PREFIX))


def read_model_info(model_dir):
    """The extras written with `info=` (task name, label names...), or {}."""
    path = os.path.join(model_dir, EXTRA_NAME)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def restore_model_dir(model_dir, **objects):
    """Restores `objects` (e.g. `encoder=...`) from the model directory's checkpoint.

    Every variable of every given object must be found in the checkpoint; checkpoint
    entries of other objects (heads not asked for, optimizer slots) are allowed.

    Raises:
      FileNotFoundError: no checkpoint in `model_dir`.
      ValueError: the checkpoint lacks some of `objects` or its shapes differ from the config.
    """
    path = model_checkpoint_path(model_dir)
    try:
        tf.train.Checkpoint(**objects).read(path).assert_existing_objects_matched()
    except AssertionError as error:
        raise ValueError(f"Checkpoint {path} does not hold {sorted(objects)} as expected: "
                         f"{error}") from None
    except ValueError as error:
        raise ValueError(f"Checkpoint {path} does not match the model built from "
                         f"{os.path.join(model_dir, CONFIG_NAME)}: {error}") from None
    return path
