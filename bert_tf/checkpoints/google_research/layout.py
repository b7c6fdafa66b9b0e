"""The files of a google-research/bert TF1 checkpoint: recognised and described, no weights read.

google-research's zips hold `bert_model.ckpt.*` beside `bert_config.json` and `vocab.txt`;
a user may also pass the checkpoint prefix itself. A name-based (TF1) checkpoint, told from an
object-based TF2 one (Model Garden's, with the same file names) by its object graph.

Example:
>>> recognise("uncased_L-12_H-768_A-12/")                  # doctest: +SKIP
True
>>> describe("uncased_L-12_H-768_A-12/").pretraining_heads  # doctest: +SKIP
['masked_lm', 'next_sentence']
"""

import os

import tensorflow as tf

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.format import FolderDescription
from bert_tf.configs import BertConfig
from bert_tf.errors import checkpoint_read_error

NAME = "google_research"
TITLE = "google-research TF1 checkpoint"
CHECKPOINT = "bert_model.ckpt"
# The pretraining heads and the variable that says a checkpoint holds each.
HEAD_VARIABLES = {"masked_lm": "cls/predictions/output_bias",
                  "next_sentence": "cls/seq_relationship/output_weights"}
POSITION_EMBEDDINGS = "bert/embeddings/position_embeddings"


def checkpoint_prefix(path):
    """The TF1 checkpoint prefix of `path`: the prefix itself, or a folder's
    `bert_model.ckpt`."""
    path = os.fspath(path).rstrip(os.sep) or os.sep
    return path if tf.io.gfile.exists(path + ".index") else os.path.join(path, CHECKPOINT)


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
    config_file = os.path.join(os.path.dirname(prefix), model_dir_lib.CONFIG_NAME)
    return FolderDescription(
        os.fspath(path), NAME, TITLE, weights=[os.path.basename(prefix) + ".*"],
        head="pretrainer" if heads else "encoder", pretraining_heads=heads,
        vocab=vocab if os.path.isfile(vocab) else None,
        max_position_embeddings=positions[0] if positions else None,
        config=BertConfig.from_json_file(config_file) if os.path.isfile(config_file) else None)
