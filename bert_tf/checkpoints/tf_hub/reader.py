"""Reads a TF Hub BERT encoder SavedModel into a `Pretrained`: its variables by
`encoder_weights.TABLE`, its config from their shapes, its vocab and casing from its assets
or its preprocessing SavedModel's.

Example:
>>> pretrained = read("bert_en_uncased_L-12_H-768_A-12_4/")   # doctest: +SKIP
>>> pretrained.config.hidden_act, pretrained.head              # doctest: +SKIP
('gelu_new', 'pretrainer')
"""

import os

from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tf_hub import encoder_weights
from bert_tf.checkpoints.tf_hub.layout import NAME, VOCAB_ASSET, hidden_act, inspect
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.errors import CheckpointError
from bert_tf.tokenization import vocab as vocab_lib


def _vocab(model, preprocess_dir, path):
    """`FolderVocab` of the encoder's own assets, or of `preprocess_dir`; both must agree."""
    vocab_file, lower_case, where = model.vocab_file, model.lower_case, path
    if preprocess_dir is not None:
        other = inspect(preprocess_dir)
        if other.kind != "preprocess":
            raise CheckpointError(f"{preprocess_dir}: a TF Hub encoder, not a preprocessing "
                                  "model.")
        if vocab_file is not None and (vocab_lib.load_vocab(vocab_file)
                                       != vocab_lib.load_vocab(other.vocab_file)):
            raise CheckpointError(f"{preprocess_dir}: its vocab {other.vocab_file} differs from "
                                  f"the encoder's {vocab_file}.")
        if lower_case is not None and lower_case != other.lower_case:
            raise CheckpointError(f"{preprocess_dir}: lower_case={other.lower_case}, but the "
                                  f"encoder {path} records do_lower_case={lower_case}.")
        vocab_file = vocab_file or other.vocab_file
        lower_case = other.lower_case if lower_case is None else lower_case
        where = f"{path} and {preprocess_dir}"
    if vocab_file is None:
        raise CheckpointError(f"{path}: the encoder carries no `{VOCAB_ASSET}` asset; pass "
                              "its TF Hub preprocessing model (preprocess_dir).")
    return FolderVocab(vocab_lib.load_vocab(vocab_file), vocab_file, lower_case, where)


def read(path, do_lower_case=None, preprocess_dir=None):
    """Reads a TF Hub BERT encoder SavedModel into a `Pretrained` (the `.mlm` head as
    `masked_lm`).

    Args:
      path: the encoder SavedModel's folder.
      do_lower_case: the caller's casing, checked against the SavedModel's `do_lower_case`.
      preprocess_dir: its TF Hub preprocessing SavedModel, for the vocab and casing where
        the encoder carries none (where both do, they must agree).

    Raises:
      CheckpointError: not an encoder (a preprocessing model has no weights), variables
        missing, left over or unlike the shapes they imply, a casing contradiction.
    """
    model = inspect(path)
    if model.kind != "encoder":
        raise CheckpointError(f"{path}: a TF Hub preprocessing model holds vocab and casing "
                              "but no weights; read its encoder (with preprocess_dir=this).")
    contents = model.contents
    if contents.duplicated:
        raise CheckpointError(f"Checkpoint {contents.checkpoint_prefix}: several variables are "
                              f"named {sorted(contents.duplicated)[:5]}; cannot tell them apart.")
    vocab = _vocab(model, preprocess_dir, path)
    lower_case = vocab.choose_lower_case(do_lower_case)
    config = encoder_weights.infer_config(contents.variables, hidden_act(contents), path)
    heads = ["masked_lm"] if encoder_weights.has_masked_lm(contents.variables) else []
    shapes = weight_map.expected_shapes(config, heads, where=path)
    rules = weight_map.expand(encoder_weights.TABLE, config.num_hidden_layers, heads)
    ignored = [name for name, key in contents.keys.items()
               if key in contents.root_variables.values()]
    weights = weight_map.translate(encoder_weights.tensor_source(contents), rules, shapes,
                                   ignored=ignored)
    logging.info("Read %d variables from %s (heads: %s).", len(rules), path, heads or "none")
    return Pretrained(
        format=NAME, path=os.fspath(path), config=config, weights=weights,
        head="pretrainer" if heads else "encoder", vocab=vocab, lower_case=lower_case,
        model_info={"source": NAME})
