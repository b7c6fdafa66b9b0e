"""TF Hub / Kaggle BERT SavedModels read into bert_tf, with no tf_keras or tensorflow_hub.

Two kinds of SavedModel come from TF Hub's BERT collection, both made by Model Garden's
`export_tfhub_lib`:
  encoder      `bert_en_uncased_L-12_H-768_A-12` and kin: the encoder's variables, the `.mlm`
               sub-object (masked-LM head) where exported with it, the `vocab_file` asset and
               the `do_lower_case` variable;
  preprocess   `bert_en_uncased_preprocess` and kin: `tokenize` and `bert_pack_inputs`, a
               vocab asset and no weights; its casing is whether its tokenizer graph folds
               case (a `CaseFoldUTF8` op).
The encoder's config comes from its variable shapes and its activation from the ops its
graph computes (Model Garden's `gelu` is the tanh approximation: `gelu_new` here). Nothing in
the SavedModel is executed (`saved_model.py`).

Example:
>>> pretrained = read("bert_en_uncased_L-12_H-768_A-12_4/")   # doctest: +SKIP
>>> pretrained.config.hidden_act, pretrained.head              # doctest: +SKIP
('gelu_new', 'pretrainer')
"""

import dataclasses
import os

from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tf_hub import encoder_weights, saved_model
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.errors import CheckpointError
from bert_tf.tokenization import vocab as vocab_lib

NAME = "tf_hub"
TITLE = "TF Hub SavedModel"
VOCAB_ASSET = "vocab_file"
SENTENCEPIECE_ASSET = "sp_model_file"
LOWER_CASE_VARIABLE = "do_lower_case"
# The sub-objects of a TF Hub preprocessing SavedModel (export_tfhub_lib's Preprocessor API).
PREPROCESS_OBJECTS = {"tokenize", "bert_pack_inputs"}
# A variable of TF Hub's 2019-20 BERTs (versions 1-2, made before Model Garden's BertEncoder).
_V1_POOLER = "bert_model/pooler_transform/kernel"
# Ops that tell the feed-forward activation apart: the exact GELU's erf, the tanh
# approximation's cube, ReLU.
_ACTIVATION_OPS = {"Erf": "gelu", "Pow": "gelu_new", "Relu": "relu"}


@dataclasses.dataclass
class HubModel:
    """A TF Hub SavedModel, its kind told and its vocab and casing found.

    Attributes:
      kind: `encoder` or `preprocess`.
      contents: the `saved_model.SavedModelContents`.
      vocab_file: the vocab asset's path, or None.
      lower_case: the recorded casing, or None.
    """

    kind: str
    contents: saved_model.SavedModelContents
    vocab_file: str = None
    lower_case: bool = None


def _refusal(path, contents, what):
    return CheckpointError(
        f"{path}: {what}; it has signatures {contents.signatures} and attributes "
        f"{contents.root_children[:12]}.")


def _vocab_asset(contents, path):
    """The WordPiece vocab among the assets: `vocab_file`, else the preprocess model's one."""
    if VOCAB_ASSET in contents.assets:
        return contents.assets[VOCAB_ASSET]
    text_assets = sorted({p for p in contents.assets.values() if p.endswith(".txt")})
    if len(text_assets) > 1:
        raise CheckpointError(f"{path}: several vocab assets {text_assets}; expected one.")
    return text_assets[0] if text_assets else None


def _encoder_casing(contents):
    if LOWER_CASE_VARIABLE not in contents.root_variables:
        return None
    return bool(contents.read_root_variable(LOWER_CASE_VARIABLE))


def inspect(path):
    """The `HubModel` at `path`, from `saved_model.pb` and the checkpoint's index.

    Raises:
      CheckpointError: a SavedModel that is not a TF Hub BERT encoder or preprocessing model
        (its signatures and attributes listed), an ALBERT (SentencePiece) one, or a damaged
        one.
    """
    contents = saved_model.read_saved_model(path)
    if SENTENCEPIECE_ASSET in contents.assets:
        raise _refusal(path, contents, "an ALBERT-style SavedModel (SentencePiece "
                       f"`{SENTENCEPIECE_ASSET}` asset); bert_tf reads WordPiece BERTs only")
    if encoder_weights.is_bert_encoder(contents.variables):
        return HubModel("encoder", contents, _vocab_asset(contents, path),
                        _encoder_casing(contents))
    if _V1_POOLER in contents.variables:
        raise _refusal(path, contents, "a TF Hub BERT of versions 1-2 (list inputs, "
                       "`bert_model/` variables); bert_tf reads versions 3 and up: take the same "
                       "model's version 3 or later")
    if PREPROCESS_OBJECTS <= set(contents.root_children):
        return HubModel("preprocess", contents, _vocab_asset(contents, path),
                        "CaseFoldUTF8" in contents.ops)
    raise _refusal(path, contents, "a SavedModel, but not a TF Hub BERT encoder or "
                   "preprocessing model (no `word_embeddings` and `pooler_transform` "
                   "variables, no `tokenize` and `bert_pack_inputs`)")


def recognise(path):
    """A folder with `saved_model.pb` (a TF Hub BERT encoder or preprocessing model; any
    other SavedModel is refused, naming what it has)."""
    path = os.fspath(path)
    if not os.path.isfile(os.path.join(path, saved_model.SAVED_MODEL_FILE)):
        return False
    inspect(path)
    return True


def hidden_act(contents):
    """The feed-forward activation the encoder's graph computes, by its tell-tale op."""
    found = sorted({act for op, act in _ACTIVATION_OPS.items() if op in contents.ops})
    if len(found) != 1:
        raise CheckpointError(
            f"{contents.folder}: cannot tell the encoder's activation from its graph (ops "
            f"for {found or 'none of gelu, gelu_new, relu'}).")
    return found[0]


def _architecture(config):
    return (f"BERT encoder, {config.num_hidden_layers} layers, H={config.hidden_size}, "
            f"{config.num_attention_heads} heads, FFN {config.intermediate_size}, "
            f"{config.hidden_act}")


def describe(path):
    """A `FolderDescription`: kind, architecture (from variable shapes), heads, vocab, casing."""
    model = inspect(path)
    description = FolderDescription(
        os.fspath(path), NAME, TITLE + (", preprocessing" if model.kind == "preprocess" else ""),
        vocab=model.vocab_file, lower_case=model.lower_case)
    if model.kind == "encoder":
        variables = model.contents.variables
        config = encoder_weights.infer_config(variables, hidden_act(model.contents), path)
        description.weights = [saved_model.VARIABLES_PREFIX + ".*"]
        description.architecture = _architecture(config)
        description.max_position_embeddings = config.max_position_embeddings
        description.pretraining_heads = (["masked_lm"] if encoder_weights.has_masked_lm(variables)
                                         else [])
        description.head = "pretrainer" if description.pretraining_heads else "encoder"
    return description


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
    encoder, head_layers = weight_map.build_models(config, heads, path)
    rules = weight_map.expand(encoder_weights.TABLE, config.num_hidden_layers, heads)
    ignored = [name for name, key in contents.keys.items()
               if key in contents.root_variables.values()]
    weight_map.assign_from(encoder_weights.tensor_source(contents), rules,
                           weight_map.model_weights(encoder, *head_layers.values()),
                           ignored=ignored)
    logging.info("Read %d variables from %s (heads: %s).", len(rules), path, heads or "none")
    return Pretrained(
        format=NAME, path=os.fspath(path), config=config, encoder=encoder,
        head="pretrainer" if heads else "encoder", vocab=vocab, lower_case=lower_case,
        heads=head_layers, model_info={"source": NAME})
