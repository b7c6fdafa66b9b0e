"""Rebuilds the Keras model of an export task from a model directory.

A model directory (`bert_tf.checkpoints.model_dir`) holds the encoder under `encoder` and a
fine-tuned head under `head` (pretraining: `masked_lm`, `next_sentence`). Head sizes are read
from the checkpoint's variable shapes, label names from `model_info.json`.
"""

import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.tokenization import vocab as vocab_lib

TASKS = ("encoder", "pretrainer", "classifier", "token_classifier", "span", "multiple_choice")
# Checkpoint objects each task needs besides `encoder`.
_REQUIRED_OBJECTS = {
    "encoder": (),
    "pretrainer": ("masked_lm",),
    "classifier": ("head",),
    "token_classifier": ("head",),
    "span": ("head",),
    "multiple_choice": ("head",),
}
_HEAD_BIAS = "head/bias/.ATTRIBUTES/VARIABLE_VALUE"


@dataclasses.dataclass
class TaskModel:
    """A model rebuilt for export: the Keras model plus what serving needs around it.

    Attributes:
      task: one of `TASKS`.
      model: the Keras model (the `BertEncoder` itself for task "encoder").
      encoder: its `BertEncoder`.
      vocab_file: the model directory's `vocab.txt`.
      lower_case: whether the tokenizer lower-cases.
      label_names: class / tag names (classifier, token_classifier), else None.
    """

    task: str
    model: object
    encoder: BertEncoder
    vocab_file: str
    lower_case: bool
    label_names: list = None


def _checkpoint_objects(path):
    """Top-level object names in a checkpoint (`encoder`, `head`, ...) and its variable shapes."""
    shapes = dict(tf.train.list_variables(path))
    return {name.split("/")[0] for name in shapes if "/" in name}, shapes


def _label_names(info, num_classes, model_dir):
    names = info.get("label_names")
    if names is None:
        logging.warning("Model directory %s has no label_names in %s; labels will be class "
                        "indices.", model_dir, model_dir_lib.EXTRA_NAME)
        return [str(i) for i in range(num_classes)]
    if len(names) != num_classes:
        raise ValueError(
            f"{os.path.join(model_dir, model_dir_lib.EXTRA_NAME)} lists {len(names)} label_names "
            f"but the checkpoint's head has {num_classes} classes.")
    return [str(name) for name in names]


def tokenizer_settings(model_dir):
    """`(vocab_file, lower_case)` of a model directory.

    `lower_case` is `do_lower_case` from `model_info.json`, else guessed from the vocab's casing.
    """
    vocab_file = model_dir_lib.vocab_path(model_dir)
    if not os.path.isfile(vocab_file):
        raise FileNotFoundError(f"Model directory {model_dir} has no {model_dir_lib.VOCAB_NAME}; "
                                "the export tokenizes in-graph and needs it.")
    info = model_dir_lib.read_model_info(model_dir)
    if "do_lower_case" in info:
        return vocab_file, bool(info["do_lower_case"])
    return vocab_file, not vocab_lib.vocab_is_cased(vocab_lib.load_vocab(vocab_file))


def load_task_model(model_dir, task):
    """Builds the model of `task` and restores it from `model_dir`.

    Args:
      model_dir: a model directory written by `write_model_dir`.
      task: one of `TASKS`.

    Returns:
      A `TaskModel`.

    Raises:
      ValueError: unknown task, or the checkpoint lacks the head the task needs.
      FileNotFoundError: no config, vocab or checkpoint in `model_dir`.
    """
    if task not in TASKS:
        raise ValueError(f"Unknown task {task!r}; choose one of {', '.join(TASKS)}.")
    vocab_file, lower_case = tokenizer_settings(model_dir)
    config = model_dir_lib.read_config(model_dir)
    info = model_dir_lib.read_model_info(model_dir)
    path = model_dir_lib.model_checkpoint_path(model_dir)
    objects, shapes = _checkpoint_objects(path)
    missing = [name for name in _REQUIRED_OBJECTS[task] if name not in objects]
    if missing:
        saved_task = info.get("task", "unknown")
        raise ValueError(
            f"Model directory {model_dir} cannot be exported as --task={task}: its checkpoint "
            f"{path} has no {', '.join(missing)} (it holds {', '.join(sorted(objects))}; "
            f"model_info task: {saved_task}). Export a model directory fine-tuned for {task}, "
            "or use --task=encoder.")

    encoder = BertEncoder(config)
    label_names = None
    if task == "encoder":
        model = encoder
        items = {"encoder": encoder}
    elif task == "pretrainer":
        model = BertPretrainer(encoder, use_next_sentence="next_sentence" in objects)
        items = model.checkpoint_items()
    else:
        num_classes = shapes[_HEAD_BIAS][0]
        if task == "classifier":
            model = BertClassifier(encoder, num_classes)
            label_names = _label_names(info, num_classes, model_dir)
        elif task == "token_classifier":
            model = BertTokenClassifier(encoder, num_classes)
            label_names = _label_names(info, num_classes, model_dir)
        elif task == "span":
            model = BertSpanLabeler(encoder)
        else:
            # The choice count is only a reshape; serving takes it from the input's shape.
            model = BertMultipleChoice(encoder, num_choices=info.get("num_choices", 2))
        items = model.checkpoint_items()
    model_dir_lib.restore_model_dir(model_dir, **items)
    return TaskModel(task=task, model=model, encoder=encoder, vocab_file=vocab_file,
                     lower_case=lower_case, label_names=label_names)
