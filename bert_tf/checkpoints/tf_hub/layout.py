"""TF Hub / Kaggle BERT SavedModels recognised and described, with no tf_keras or tensorflow_hub.

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
>>> inspect("bert_en_uncased_preprocess_3/").kind             # doctest: +SKIP
'preprocess'
>>> describe("bert_en_uncased_L-12_H-768_A-12_4/").head        # doctest: +SKIP
'pretrainer'
"""

import dataclasses
import os

from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.tf_hub import encoder_weights, saved_model
from bert_tf.errors import CheckpointError

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
# A preprocessing model lower-cases with either: TF Hub's with tf-text's `case_fold_utf8`,
# bert_tf's exports with `tf.strings.lower` (it matches the reference tokenizer's casing).
_LOWER_CASING_OPS = frozenset({"CaseFoldUTF8", "StringLower"})


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
                        bool(_LOWER_CASING_OPS & contents.ops))
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
        description.config = config
        description.pretraining_heads = (["masked_lm"] if encoder_weights.has_masked_lm(variables)
                                         else [])
        description.head = "pretrainer" if description.pretraining_heads else "encoder"
    return description


