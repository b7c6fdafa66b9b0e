"""Reads google-research/bert TF1 checkpoints (`bert_model.ckpt` + `bert_config.json`).

Read with `tf.train.load_checkpoint`, by the variable names of google-research's
`modeling.py` and `run_pretraining.py`. TF1 `tf.layers.dense` kernels are `[in, out]` like
ours; only `cls/seq_relationship/output_weights` is stored `[2, H]` and transposes.

`hidden_act: gelu` is kept as written: bert_tf reads it as the exact erf GELU (as Hugging
Face does); google-research's code computed the tanh approximation under that name, which
differs by at most 5e-4 per activation.

Example:
>>> pretrained = read("uncased_L-12_H-768_A-12/bert_model.ckpt",  # doctest: +SKIP
...                   do_lower_case=True)
>>> sorted(pretrained.heads)                                       # doctest: +SKIP
['masked_lm', 'next_sentence']
"""

import os

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.google_research.layout import (
    HEAD_VARIABLES,
    NAME,
    checkpoint_prefix,
)
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab, choose_lower_case
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.configs import BertConfig
from bert_tf.errors import checkpoint_read_error
from bert_tf.tokenization import vocab as vocab_lib

# Optimizer state and step counters that pretraining checkpoints also hold.
_SLOT_SUFFIXES = ("/adam_m", "/adam_v")
_IGNORED = ("global_step",)


# Our weight path <- google-research TF1 variable name.
TABLE = weight_map.bert_rules(weight_map.Spelling(
    sep="/", embeddings="bert/embeddings", block=f"bert/encoder/layer_{LAYER}",
    pooler="bert/pooler/dense", transform="cls/predictions/transform", embedding_leaf="",
    kernel="kernel", bias="bias", gamma="gamma", beta="beta", transposed_kernel=False)) + (
    Rule("masked_lm/output_bias", "cls/predictions/output_bias", False),
    Rule("next_sentence/kernel", "cls/seq_relationship/output_weights", True),
    Rule("next_sentence/bias", "cls/seq_relationship/output_bias", False),
)


def _require_checkpoint(ckpt_prefix):
    if not tf.io.gfile.exists(ckpt_prefix + ".index"):
        raise FileNotFoundError(
            f"No TF1 checkpoint at {ckpt_prefix}: expected {ckpt_prefix}.index (pass the "
            "prefix, e.g. .../bert_model.ckpt, not a file name).")


def read_tf1_checkpoint(ckpt_prefix):
    """The model variables of a TF1 checkpoint as a `TensorSource` (optimizer slots dropped)."""
    _require_checkpoint(ckpt_prefix)
    try:
        reader = tf.train.load_checkpoint(ckpt_prefix)
    except (IndexError, tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(ckpt_prefix, error) from None
    shapes = {name: shape for name, shape in reader.get_variable_to_shape_map().items()
              if not name.endswith(_SLOT_SUFFIXES)}

    def read(name):
        try:
            return reader.get_tensor(name)
        except (IndexError, tf.errors.OpError) as error:
            raise checkpoint_read_error(ckpt_prefix, error) from None

    return weight_map.TensorSource(shapes, read, where=ckpt_prefix)


def read(path, do_lower_case=None, bert_config_file=None, vocab_file=None):
    """Reads a google-research checkpoint (a folder, or the prefix) into a `Pretrained`.

    Args:
      path: the folder of google-research's zips, or the checkpoint prefix.
      do_lower_case: the model's casing (google-research's `uncased_*` models: True); None
        guesses it from the vocab, with a warning.
      bert_config_file, vocab_file: default to the files beside the checkpoint.

    Raises:
      FileNotFoundError: no checkpoint, config or vocab.
      CheckpointError: a damaged checkpoint, or tensors missing, left over, shaped unlike the
        config or not finite (named).
    """
    prefix = checkpoint_prefix(path)
    folder = os.path.dirname(prefix)
    bert_config_file = bert_config_file or os.path.join(folder, model_dir_lib.CONFIG_NAME)
    vocab_file = vocab_file or os.path.join(folder, model_dir_lib.VOCAB_NAME)
    _require_checkpoint(prefix)
    if not os.path.exists(vocab_file):
        raise FileNotFoundError(f"Vocab file not found: {vocab_file} (the WordPiece "
                                "vocabulary is needed to tokenize text).")
    lower_case = choose_lower_case(vocab_file, do_lower_case=do_lower_case)
    config = BertConfig.from_json_file(bert_config_file)
    source = read_tf1_checkpoint(prefix)
    heads = [group for group, name in HEAD_VARIABLES.items() if name in source.shapes]
    shapes = weight_map.expected_shapes(config, heads, where=bert_config_file)
    rules = weight_map.expand(TABLE, config.num_hidden_layers, heads)
    weights = weight_map.translate(source, rules, shapes, ignored=_IGNORED)
    logging.info("Read %d tensors from %s (heads: %s).", len(rules), prefix, heads or "none")
    return Pretrained(
        format=NAME, path=prefix, config=config, weights=weights,
        head="pretrainer" if heads else "encoder",
        vocab=FolderVocab(vocab_lib.load_vocab(vocab_file), vocab_file), lower_case=lower_case,
        model_info={"source": NAME})
