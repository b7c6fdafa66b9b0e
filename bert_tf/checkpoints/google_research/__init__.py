"""google-research/bert TF1 checkpoints as a registry format: the folder of google-research's
zips (`bert_model.ckpt.*` + `bert_config.json` + `vocab.txt`) or the checkpoint prefix.

Read only (`reader.read`); bert_tf writes model directories and Hugging Face folders, which
every current consumer of these checkpoints reads.

Example:
>>> FORMAT.recognise("uncased_L-12_H-768_A-12/")   # doctest: +SKIP
True
"""

import os

import tensorflow as tf

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.format import FolderDescription, Format
from bert_tf.checkpoints.google_research.reader import (
    CHECKPOINT,
    HEAD_VARIABLES,
    NAME,
    POSITION_EMBEDDINGS,
    checkpoint_prefix,
    read,
)
from bert_tf.errors import checkpoint_read_error


def recognise(path):
    """A folder holding `bert_model.ckpt.index`, or a TF checkpoint prefix other than a model
    directory's `model.ckpt`, with `bert_config.json` beside it; a name-based (TF1)
    checkpoint, not an object-based TF2 one (a Model Garden folder has the same file names)."""
    path = os.fspath(path).rstrip(os.sep) or os.sep
    if os.path.isfile(path + ".index"):
        folder = os.path.dirname(path)
        found = (os.path.basename(path) != model_dir_lib.CHECKPOINT_PREFIX
                 and os.path.isfile(os.path.join(folder, model_dir_lib.CONFIG_NAME)))
    else:
        found = os.path.isfile(os.path.join(path, CHECKPOINT + ".index"))
    return found and not _object_based(checkpoint_prefix(path))


def _object_based(prefix):
    """Whether the checkpoint at `prefix` was saved by `tf.train.Checkpoint` (TF2)."""
    try:
        return tf.train.load_checkpoint(prefix).has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
    except (tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None


def describe(path):
    """A `FolderDescription` from the checkpoint's index (no values read)."""
    prefix = checkpoint_prefix(path)
    try:
        variables = dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None
    heads = [head for head, name in HEAD_VARIABLES.items() if name in variables]
    vocab = os.path.join(os.path.dirname(prefix), model_dir_lib.VOCAB_NAME)
    positions = variables.get(POSITION_EMBEDDINGS)  # [P, H]
    return FolderDescription(
        os.fspath(path), NAME, FORMAT.title, weights=[os.path.basename(prefix) + ".*"],
        head="pretrainer" if heads else "encoder", pretraining_heads=heads,
        vocab=vocab if os.path.isfile(vocab) else None,
        max_position_embeddings=positions[0] if positions else None)


FORMAT = Format(
    name=NAME, title="google-research TF1 checkpoint",
    layout="bert_config.json + bert_model.ckpt.* + vocab.txt, or the checkpoint prefix",
    recognise=recognise, describe=describe, read=read,
    options=("bert_config_file", "vocab_file"))

__all__ = ["FORMAT", "read"]
