"""Reads the weights of a model directory into models: config, checkpoint path, restore.

This is the part of the model directory (`bert_tf.checkpoints.model_dir`) that models need
(`BertEncoder.from_pretrained`), so it sits below them: it imports configs and TensorFlow,
never models or checkpoints. Writing a model directory and its `model_info.json` lives in
`bert_tf.checkpoints.model_dir`, which re-exports these readers.

Example:
>>> encoder = BertEncoder(read_config("/tmp/minilm"))               # doctest: +SKIP
>>> restore_model_dir("/tmp/minilm", encoder=encoder)               # doctest: +SKIP
'/tmp/minilm/model.ckpt'
"""

import os

import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.errors import UserError

CONFIG_NAME = "bert_config.json"
VOCAB_NAME = "vocab.txt"
CHECKPOINT_PREFIX = "model.ckpt"


class CheckpointError(UserError, ValueError):
    """A checkpoint or model directory that cannot be read or converted (file, tensor named)."""


def read_config(model_dir):
    """Reads the `BertConfig` of a model directory."""
    return BertConfig.from_json_file(os.path.join(model_dir, CONFIG_NAME))


def vocab_path(model_dir):
    """The `vocab.txt` of a model directory (it may not exist)."""
    return os.path.join(model_dir, VOCAB_NAME)


def model_checkpoint_path(model_dir):
    """The checkpoint prefix in `model_dir`: `model.ckpt`, else the newest CheckpointManager one."""
    if not tf.io.gfile.isdir(model_dir):
        raise FileNotFoundError(f"Model directory {model_dir} does not exist.")
    prefix = os.path.join(model_dir, CHECKPOINT_PREFIX)
    if tf.io.gfile.exists(prefix + ".index"):
        return prefix
    latest = tf.train.latest_checkpoint(model_dir)
    if latest is None:
        raise FileNotFoundError(
            f"No checkpoint in model directory {model_dir}: expected {CHECKPOINT_PREFIX}.index "
            "(written by tools/convert_checkpoint.py or a training run).")
    return latest


def checkpoint_read_error(path, error):
    """The `CheckpointError` for a checkpoint file TensorFlow failed to read (truncated, cut)."""
    reason = str(error).strip().split("\n")[0] or type(error).__name__
    return CheckpointError(
        f"Checkpoint {path} is damaged or half-written ({reason}); write it again (rerun the "
        "conversion or training that made it).")


def check_finite(variables, where):
    """Raises `CheckpointError` naming the first float variable holding NaN or Inf."""
    for variable in variables:
        value = tf.convert_to_tensor(variable)
        if value.dtype.is_floating and not bool(tf.reduce_all(tf.math.is_finite(value))):
            name = getattr(variable, "path", None) or variable.name
            raise CheckpointError(f"{where}: weight `{name}` holds NaN or Inf values; the "
                                  "model is unusable (retrain or convert it from a sound "
                                  "checkpoint).")


def restore_model_dir(model_dir, **objects):
    """Restores `objects` (e.g. `encoder=...`) from the model directory's checkpoint.

    Every variable of every given object must be found in the checkpoint, and be finite;
    checkpoint entries of other objects (heads not asked for, optimizer slots) are allowed.

    Returns:
      The checkpoint prefix read.

    Raises:
      FileNotFoundError: no model directory or no checkpoint in it.
      CheckpointError: the checkpoint is damaged, lacks some of `objects`, has shapes unlike
        the config or holds NaN/Inf weights.
    """
    path = model_checkpoint_path(model_dir)
    try:
        tf.train.Checkpoint(**objects).read(path).assert_existing_objects_matched()
    except AssertionError as error:
        raise CheckpointError(f"Checkpoint {path} does not hold {sorted(objects)} as expected: "
                              f"{error}") from None
    except (IndexError, tf.errors.OpError) as error:
        raise checkpoint_read_error(path, error) from None
    except ValueError as error:
        raise CheckpointError(f"Checkpoint {path} does not match the model built from "
                              f"{os.path.join(model_dir, CONFIG_NAME)}: {error}") from None
    check_finite([v for item in objects.values() for v in item.variables], f"Checkpoint {path}")
    return path
