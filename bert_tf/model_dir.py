"""The model directory: `bert_config.json`, `vocab.txt`, a checkpoint and `model_info.json`.

Conversion, pretraining and fine-tuning all write this layout; every loader reads it, models
included (`BertEncoder.from_pretrained`), so this module sits below them: it imports configs,
tokenization's vocab and TensorFlow, never models or checkpoints. The checkpoint holds the
encoder under the key `encoder` and heads beside it. `model_info.json` says how to read the
directory: the `head` the checkpoint holds, `do_lower_case` and `max_seq_length`, so consumers
(export, extract_features, fine-tuning) never guess; a flag that contradicts it is an error, as
google-research's `validate_case_matches_checkpoint` made it.

Example:
>>> encoder = BertEncoder(read_config("/tmp/minilm"))                           # doctest: +SKIP
>>> restore_model_dir("/tmp/minilm", encoder=encoder)                           # doctest: +SKIP
'/tmp/minilm/model.ckpt'
>>> write_model_dir("/tmp/mrpc", config, "vocab.txt", encoder=encoder, head=head)  # doctest: +SKIP
>>> write_model_info("/tmp/mrpc", head="classifier", do_lower_case=True,        # doctest: +SKIP
...                  max_seq_length=128, label_names=["0", "1"])
>>> read_model_info("/tmp/mrpc")["max_seq_length"]                               # doctest: +SKIP
128
"""

import json
import os
import shutil

import tensorflow as tf
from absl import logging

from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object
from bert_tf.tokenization import vocab as vocab_lib

CONFIG_NAME = "bert_config.json"
VOCAB_NAME = "vocab.txt"
CHECKPOINT_PREFIX = "model.ckpt"
MODEL_INFO_NAME = "model_info.json"
# What a checkpoint holds beside the encoder, named after the model class that reads it
# (`encoder`: nothing beside it). Export serves one of these.
HEADS = ("encoder", "pretrainer", "classifier", "token_classifier", "span_labeler",
         "multiple_choice")
# `task` values written before `head` existed.
_OLD_TASK_NAMES = {"pretraining": "pretrainer"}


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
        tf.train.Checkpoint(**objects).read(path).expect_partial().assert_existing_objects_matched()
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


def write_model_dir(model_dir, config, vocab_file=None, info=None, **objects):
    """Writes config, vocab and a checkpoint of `objects` (e.g. `encoder=..., head=...`).

    Args:
      model_dir: destination folder, created if missing.
      config: the `BertConfig` of the encoder.
      vocab_file: a WordPiece vocab to copy in, or None.
      info: keyword arguments of `write_model_info` (`head`, `do_lower_case`,
        `max_seq_length`, extras such as `label_names`), or None.
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
        write_model_info(model_dir, **info)
    return tf.train.Checkpoint(**objects).write(os.path.join(model_dir, CHECKPOINT_PREFIX))


def _checked(head, do_lower_case, max_seq_length, where):
    if head is not None and head not in HEADS:
        raise CheckpointError(f"{where}: `head` must be one of {', '.join(HEADS)}; "
                              f"got {head!r}.")
    if do_lower_case is not None and not isinstance(do_lower_case, bool):
        raise CheckpointError(f"{where}: `do_lower_case` must be true or false; "
                              f"got {do_lower_case!r}.")
    if max_seq_length is not None and (isinstance(max_seq_length, bool)
                                       or not isinstance(max_seq_length, int)
                                       or max_seq_length < 3):
        raise CheckpointError(f"{where}: `max_seq_length` must be an integer of at least 3; "
                              f"got {max_seq_length!r}.")


def write_model_info(model_dir, head=None, do_lower_case=None, max_seq_length=None, **extras):
    """Writes `model_info.json`: how to read this model directory.

    Args:
      model_dir: the model directory.
      head: one of `HEADS`, what the checkpoint holds beside the encoder.
      do_lower_case: whether the model's tokenizer lower-cases (uncased models).
      max_seq_length: the sequence length it was trained with; None if not fixed.
      **extras: JSON-serializable extras (`label_names`, `num_choices`, `step`, ...).
    """
    path = os.path.join(model_dir, MODEL_INFO_NAME)
    _checked(head, do_lower_case, max_seq_length, path)
    known = {"head": head, "do_lower_case": do_lower_case, "max_seq_length": max_seq_length}
    info = dict(extras, **{key: value for key, value in known.items() if value is not None})
    tf.io.gfile.makedirs(model_dir)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")


def read_model_info(model_dir):
    """The contents of `model_info.json` (checked), or {} for a directory without one.

    A directory written before `head` existed gets it from its old `task` value.

    Raises:
      CheckpointError: the file is not a JSON object or a known field has a wrong value.
    """
    path = os.path.join(model_dir, MODEL_INFO_NAME)
    if not os.path.exists(path):
        return {}
    info = read_json_object(path)
    if "head" not in info and info.get("task") in HEADS + tuple(_OLD_TASK_NAMES):
        info["head"] = _OLD_TASK_NAMES.get(info["task"], info["task"])
    _checked(info.get("head"), info.get("do_lower_case"), info.get("max_seq_length"), path)
    return info


def choose_lower_case(vocab_file, saved=None, saved_where=None, do_lower_case=None,
                      flag="do_lower_case"):
    """Whether to lower-case: a recorded value, checked against the user's; else a vocab guess.

    Args:
      vocab_file: the model's `vocab.txt`.
      saved: the recorded `do_lower_case` (model_info.json, tokenizer_config.json), or None.
      saved_where: the file it was read from, for messages.
      do_lower_case: the user's choice, or None to take the recorded one.
      flag: the flag name to cite in messages.

    Raises:
      CheckpointError: `do_lower_case` contradicts the recorded value.
      VocabError: no readable vocab where a guess is needed.
    """
    if saved is not None:
        if do_lower_case is not None and do_lower_case != saved:
            raise CheckpointError(
                f"--{flag}={do_lower_case} contradicts {saved_where} (do_lower_case: "
                f"{str(saved).lower()}): the model was trained {'uncased' if saved else 'cased'}."
                f" Drop the flag or pass --{flag}={saved}.")
        return saved
    vocab = vocab_lib.load_vocab(vocab_file)
    if do_lower_case is not None:
        vocab_lib.check_case_matches_vocab(vocab, do_lower_case, vocab_file)
        return do_lower_case
    guess = not vocab_lib.vocab_is_cased(vocab)
    logging.warning("No do_lower_case recorded%s; guessed do_lower_case=%s from the casing of "
                    "%s. Pass --%s to choose.", f" in {saved_where}" if saved_where else "",
                    guess, vocab_file, flag)
    return guess


def resolve_lower_case(model_dir, do_lower_case=None, flag="do_lower_case"):
    """`(vocab_file, lower_case)` of `model_dir`: `model_info.json`'s casing, checked against a flag.

    Old directories without `do_lower_case` fall back to the vocab's casing, with a warning.

    Raises:
      FileNotFoundError: no `vocab.txt`.
      CheckpointError: `do_lower_case` contradicts `model_info.json`.
    """
    vocab_file = vocab_path(model_dir)
    if not os.path.isfile(vocab_file):
        raise FileNotFoundError(f"Model directory {model_dir} has no {VOCAB_NAME}; it is needed "
                                "to tokenize text.")
    saved = read_model_info(model_dir).get("do_lower_case")
    return vocab_file, choose_lower_case(vocab_file, saved, os.path.join(model_dir, MODEL_INFO_NAME),
                                         do_lower_case, flag)


__all__ = [
    "CHECKPOINT_PREFIX", "CONFIG_NAME", "HEADS", "MODEL_INFO_NAME", "VOCAB_NAME",
    "checkpoint_read_error", "choose_lower_case",
    "model_checkpoint_path", "read_config", "read_model_info", "resolve_lower_case",
    "restore_model_dir", "vocab_path", "write_model_dir", "write_model_info",
]
