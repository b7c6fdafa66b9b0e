"""Writes a model directory: config, vocab, a checkpoint of the given models, `model_info.json`.

`write_model_dir` is what conversion, pretraining and fine-tuning call with their models;
`write` writes a `Pretrained` (the registry's writer, for `convert_checkpoint`).

Example:
>>> write_model_dir("/tmp/mrpc", config, "vocab.txt", encoder=encoder, head=head)  # doctest: +SKIP
>>> write_model_info("/tmp/mrpc", head="classifier", do_lower_case=True,        # doctest: +SKIP
...                  max_seq_length=128, label_names=["0", "1"])
"""

import json
import os
import shutil

import tensorflow as tf

from bert_tf.checkpoints.model_dir.layout import (
    CHECKPOINT_PREFIX,
    CONFIG_NAME,
    MODEL_INFO_NAME,
    check_info,
    vocab_path,
)
from bert_tf.checkpoints.tokenizer_json import write_vocab


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
    target = vocab_path(model_dir)
    if vocab_file is not None and os.path.abspath(vocab_file) != os.path.abspath(target):
        shutil.copyfile(vocab_file, vocab_path(model_dir))
    if info is not None:
        write_model_info(model_dir, **info)
    return tf.train.Checkpoint(**objects).write(os.path.join(model_dir, CHECKPOINT_PREFIX))


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
    check_info(head, do_lower_case, max_seq_length, path)
    known = {"head": head, "do_lower_case": do_lower_case, "max_seq_length": max_seq_length}
    info = dict(extras, **{key: value for key, value in known.items() if value is not None})
    tf.io.gfile.makedirs(model_dir)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")


def write(pretrained, output_dir):
    """Writes a `PretrainedModels` as a model directory, with its `model_info.json`.

    Returns:
      The checkpoint prefix written.
    """
    objects = dict(pretrained.heads)
    if pretrained.task_head is not None:
        objects["head"] = pretrained.task_head
    vocab = pretrained.require_vocab()
    prefix = write_model_dir(
        output_dir, pretrained.config, vocab_file=vocab.vocab_file,
        info=pretrained.model_dir_info(), encoder=pretrained.encoder, **objects)
    if vocab.vocab_file is None:
        write_vocab(vocab.tokens, vocab_path(output_dir))
    return prefix
