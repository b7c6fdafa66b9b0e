"""Rebuilds the Keras model of a head from a model directory, with what serving needs around it.

A model directory (`checkpoints.model_dir`) holds the encoder under `encoder` and a
fine-tuned head under `head` (pretraining: `masked_lm`, `next_sentence`). Head sizes are read
from the checkpoint's variable shapes; label names, casing and sequence length from
`model_info.json`.

Example:
>>> restored = restore_model("/tmp/mrpc", "classifier")  # doctest: +SKIP
>>> restored.label_names, restored.lower_case            # doctest: +SKIP
(['0', '1'], True)
"""

import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.model_dir import HEADS
from bert_tf.dtype_policy import policy_scope
from bert_tf.errors import CheckpointError, checkpoint_read_error
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)

# Checkpoint objects each head needs besides `encoder`.
_REQUIRED_OBJECTS = {
    "encoder": (),
    "pretrainer": ("masked_lm",),
    "classifier": ("head",),
    "token_classifier": ("head",),
    "span_labeler": ("head",),
    "multiple_choice": ("head",),
}
_HEAD_BIAS = "head/bias/.ATTRIBUTES/VARIABLE_VALUE"


@dataclasses.dataclass
class RestoredModel:
    """A model rebuilt from a model directory: the Keras model plus what serving needs.

    Attributes:
      head: one of `HEADS`.
      model: the Keras model (the `BertEncoder` itself for head "encoder").
      encoder: its `BertEncoder`.
      vocab_file: the model directory's `vocab.txt`.
      lower_case: whether the tokenizer lower-cases.
      label_names: class / tag names (classifier, token_classifier), else None.
      max_seq_length: the sequence length it was trained with (model_info.json), or None.
    """

    head: str
    model: object
    encoder: BertEncoder
    vocab_file: str
    lower_case: bool
    label_names: list = None
    max_seq_length: int = None


def _checkpoint_objects(path):
    """Top-level object names in a checkpoint (`encoder`, `head`, ...) and its variable shapes."""
    try:
        shapes = dict(tf.train.list_variables(path))
    except tf.errors.OpError as error:
        raise checkpoint_read_error(path, error) from None
    return {name.split("/")[0] for name in shapes if "/" in name}, shapes


def _label_names(info, num_classes, model_dir):
    names = info.get("label_names")
    if names is None:
        logging.warning("Model directory %s has no label_names in %s; labels will be class "
                        "indices.", model_dir, model_dir_lib.MODEL_INFO_NAME)
        return [str(i) for i in range(num_classes)]
    if len(names) != num_classes:
        raise CheckpointError(
            f"{os.path.join(model_dir, model_dir_lib.MODEL_INFO_NAME)} lists {len(names)} "
            f"label_names but the checkpoint's head has {num_classes} classes.")
    return [str(name) for name in names]


def restore_model(model_dir, head, do_lower_case=None, dtype="float32"):
    """Builds the model of `head` and restores it from `model_dir`.

    Args:
      model_dir: a model directory written by `write_model_dir`.
      head: one of `HEADS`.
      do_lower_case: the caller's casing, checked against `model_info.json`; None takes it.
      dtype: "float32", or "bfloat16": the model is built under Keras's "bfloat16" policy
        (weights stored and computed in bfloat16; the LayerNorms stay float32) and given the
        checkpoint's float32 weights rounded to bfloat16.

    Returns:
      A `RestoredModel`.

    Raises:
      CheckpointError: unknown head, the checkpoint lacks it or is damaged, or
        `do_lower_case` contradicts `model_info.json`.
      FileNotFoundError: no config, vocab or checkpoint in `model_dir`.
    """
    if head not in HEADS:
        raise CheckpointError(f"Unknown head {head!r}; choose one of {', '.join(HEADS)}.")
    vocab_file, lower_case = model_dir_lib.resolve_lower_case(model_dir, do_lower_case)
    config = model_dir_lib.read_config(model_dir)
    info = model_dir_lib.read_model_info(model_dir)
    path = model_dir_lib.model_checkpoint_path(model_dir)
    objects, shapes = _checkpoint_objects(path)
    missing = [name for name in _REQUIRED_OBJECTS[head] if name not in objects]
    if missing:
        raise CheckpointError(
            f"Model directory {model_dir} cannot be exported as --head={head}: its checkpoint "
            f"{path} has no {', '.join(missing)} (it holds {', '.join(sorted(objects))}; "
            f"model_info head: {info.get('head', 'unknown')}). Export a model directory "
            f"fine-tuned for {head}, or use --head=encoder.")

    if dtype not in ("float32", "bfloat16"):
        raise CheckpointError(f"dtype must be float32 or bfloat16; received {dtype!r}.")
    model, encoder, items, label_names = _build(head, config, info, objects, shapes, model_dir)
    model_dir_lib.restore_model_dir(model_dir, **items)
    if dtype == "bfloat16":
        float32_model = model
        with policy_scope("bfloat16"):
            model, encoder, _, _ = _build(head, config, info, objects, shapes, model_dir)
        _copy_weights(float32_model, model)
    return RestoredModel(head=head, model=model, encoder=encoder, vocab_file=vocab_file,
                         lower_case=lower_case, label_names=label_names,
                         max_seq_length=info.get("max_seq_length"))


def _copy_weights(source, target):
    """Assigns `source`'s weights to `target`'s (built alike, so in the same order), cast to
    their dtypes."""
    if [w.shape for w in source.weights] != [w.shape for w in target.weights]:
        raise CheckpointError("The bfloat16 model's weights do not line up with the float32 "
                              "model's.")
    for source_weight, target_weight in zip(source.weights, target.weights):
        target_weight.assign(tf.cast(source_weight.value, target_weight.dtype))


def _build(head, config, info, objects, shapes, model_dir):
    """`(model, encoder, checkpoint items, label names)` of `head`, built, not restored."""
    encoder = BertEncoder(config)
    label_names = None
    if head == "encoder":
        model = encoder
        items = {"encoder": encoder}
    elif head == "pretrainer":
        model = BertPretrainer(encoder, use_next_sentence="next_sentence" in objects)
        items = model.checkpoint_items()
    else:
        num_classes = shapes[_HEAD_BIAS][0]
        if head == "classifier":
            model = BertClassifier(encoder, num_classes)
            label_names = _label_names(info, num_classes, model_dir)
        elif head == "token_classifier":
            model = BertTokenClassifier(encoder, num_classes)
            label_names = _label_names(info, num_classes, model_dir)
        elif head == "span_labeler":
            model = BertSpanLabeler(encoder)
        else:
            # The choice count is only a reshape; serving takes it from the input's shape.
            model = BertMultipleChoice(encoder, num_choices=info.get("num_choices", 2))
        items = model.checkpoint_items()
    return model, encoder, items, label_names
