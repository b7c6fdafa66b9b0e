"""The model directory's files: their names, the small ones read, the layout recognised.

`bert_config.json`, `vocab.txt`, a checkpoint (`model.ckpt.*`, or a training run's newest
`ckpt-N`) and `model_info.json`, which says how to read the directory: the `head` the
checkpoint holds, `do_lower_case` and `max_seq_length`, so consumers (export,
extract_features, fine-tuning) never guess; a flag that contradicts it is an error, as
google-research's `validate_case_matches_checkpoint` made it.

Example:
>>> read_model_info("/tmp/mrpc")["max_seq_length"]                 # doctest: +SKIP
128
>>> describe("/tmp/mrpc").head                                     # doctest: +SKIP
'classifier'
"""

import os

import tensorflow as tf

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.tokenizer_json import choose_lower_case
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError, checkpoint_read_error
from bert_tf.file_io import read_json_object

NAME = "model_dir"
TITLE = "bert_tf model directory"
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
# A fine-tuned task head in the checkpoint; its bias length is the class count.
HEAD_BIAS = "head/bias/.ATTRIBUTES/VARIABLE_VALUE"
# The heads a model directory holds as one `Dense` named `head`.
TASK_HEADS = ("classifier", "token_classifier", "span_labeler", "multiple_choice")
# The checkpoint name of a training run's output (`training.checkpointing`).
_TRAINING_CHECKPOINT = "ckpt-"


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


def check_info(head, do_lower_case, max_seq_length, where):
    """Refuses a `model_info.json` field of the wrong kind (`where`: the file)."""
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
    check_info(info.get("head"), info.get("do_lower_case"), info.get("max_seq_length"), path)
    return info


def resolve_lower_case(model_dir, do_lower_case=None, flag="do_lower_case"):
    """`(vocab_file, lower_case)`: `model_info.json`'s casing, checked against a flag.

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
    where = os.path.join(model_dir, MODEL_INFO_NAME)
    return vocab_file, choose_lower_case(vocab_file, saved, where, do_lower_case, flag)


def folder_of(path):
    """The model directory of `path` (the directory, or its `model.ckpt` prefix)."""
    path = os.fspath(path).rstrip(os.sep) or os.sep
    if os.path.basename(path) == CHECKPOINT_PREFIX:
        return os.path.dirname(path)
    return path


def recognise(path):
    """A folder (or its `model.ckpt` prefix) with `bert_config.json` and a checkpoint:
    `model.ckpt.*`, or a training run's `checkpoint` file (not google-research's
    `bert_model.ckpt`)."""
    folder = folder_of(path)
    if not os.path.isfile(os.path.join(folder, CONFIG_NAME)):
        return False
    if os.path.isfile(os.path.join(folder, CHECKPOINT_PREFIX + ".index")):
        return True
    if os.fspath(path) != folder or not os.path.isfile(os.path.join(folder, "checkpoint")):
        return False
    # A training run's: `Trainer`'s CheckpointManager names them `ckpt-N` (Model Garden's
    # converter writes `bert_model.ckpt-N` beside a `checkpoint` file too).
    latest = tf.train.latest_checkpoint(folder)
    return latest is not None and os.path.basename(latest).startswith(_TRAINING_CHECKPOINT)


def checkpoint_variables(prefix):
    """{variable name: shape} of a TF checkpoint's index (no values read)."""
    try:
        return dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None


def describe(path):
    """A `FolderDescription` from `model_info.json` and the checkpoint's index."""
    folder = folder_of(path)
    prefix = model_checkpoint_path(folder)
    info = read_model_info(folder)
    variables = checkpoint_variables(prefix)
    config = read_config(folder)
    description = FolderDescription(
        os.fspath(path), NAME, TITLE, weights=[os.path.basename(prefix) + ".*"],
        head=info.get("head"), architecture=info.get("huggingface_architecture"),
        label_names=info.get("label_names"), problem_type=info.get("problem_type"),
        lower_case=info.get("do_lower_case"), config=config,
        max_position_embeddings=config.max_position_embeddings)
    description.pretraining_heads = sorted(
        {name.split("/")[0] for name in variables} & set(weight_map.HEAD_GROUPS))
    if HEAD_BIAS in variables:
        description.num_labels = variables[HEAD_BIAS][0]
    elif description.label_names:
        description.num_labels = len(description.label_names)
    if os.path.isfile(vocab_path(folder)):
        description.vocab = vocab_path(folder)
    return description
