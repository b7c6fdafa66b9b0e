"""TF Hub BERT encoder variables: their name-map table and the config their shapes imply.

TF Hub's BERT SavedModels (versions 3 and up: `bert_en_uncased_L-12_H-768_A-12`, the small
BERTs, the experts) are Model Garden `BertEncoder`s exported by
`official/nlp/tools/export_tfhub_lib.py`; their variables keep the names Model Garden gives
them (`transformer/layer_0/self_attention/query/kernel`) and its attention layout: query, key
and value kernels `[H, N, H/N]` with biases `[N, H/N]`, the attention output kernel
`[N, H/N, H]`. bert_tf holds those as `[H, H]` matrices in the same head-major order, so
each is reshaped (never transposed). The `.mlm` sub-object's masked-LM head (Model Garden's
`MaskedLM`, named `cls/predictions`) maps onto `BertPretrainer`'s `masked_lm`.

Example:
>>> config = infer_config(contents.variables, "gelu_new", contents.folder)  # doctest: +SKIP
>>> config.num_attention_heads                                             # doctest: +SKIP
12
"""

import re

import numpy as np

from bert_tf.checkpoints.weight_map import LAYER, Rule, TensorSource, dense_rules, norm_rules
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError

_BLOCK = f"transformer/layer_{LAYER}"
_WORD_EMBEDDINGS = "word_embeddings/embeddings"
# Model Garden's `MaskedLM` layer, named under the pretrainer's scope (`bert/`) in exports.
_MASKED_LM = "cls/predictions/"
_MASKED_LM_BIAS = _MASKED_LM + "output_bias/bias"
# Model Garden's ALBERT and factorized-embedding BERTs project the embeddings to H.
_EMBEDDING_PROJECTION = "embedding_projection/kernel"




# Our weight path <- the TF Hub (Model Garden) variable name.
TABLE = (
    Rule("embeddings/word_embeddings/embeddings", _WORD_EMBEDDINGS, False),
    Rule("embeddings/position_embeddings", "position_embedding/embeddings", False),
    Rule("embeddings/token_type_embeddings/embeddings", "type_embeddings/embeddings", False),
    *norm_rules("embeddings/layer_norm", "embeddings/layer_norm"),
    *dense_rules(f"layer_{LAYER}/attention/query", f"{_BLOCK}/self_attention/query"),
    *dense_rules(f"layer_{LAYER}/attention/key", f"{_BLOCK}/self_attention/key"),
    *dense_rules(f"layer_{LAYER}/attention/value", f"{_BLOCK}/self_attention/value"),
    *dense_rules(f"layer_{LAYER}/attention/output", f"{_BLOCK}/self_attention/attention_output"),
    *norm_rules(f"layer_{LAYER}/attention_layer_norm", f"{_BLOCK}/self_attention_layer_norm"),
    *dense_rules(f"layer_{LAYER}/intermediate", f"{_BLOCK}/intermediate"),
    *dense_rules(f"layer_{LAYER}/output", f"{_BLOCK}/output"),
    *norm_rules(f"layer_{LAYER}/output_layer_norm", f"{_BLOCK}/output_layer_norm"),
    *dense_rules("pooler", "pooler_transform"),
    *dense_rules("masked_lm/transform", "cls/predictions/transform/dense"),
    *norm_rules("masked_lm/layer_norm", "cls/predictions/transform/LayerNorm"),
    Rule("masked_lm/output_bias", _MASKED_LM_BIAS, False),
)

# The per-head tensors, by the end of their name: how their head axes merge into one.
_HEADS_LAST = re.compile(r"/self_attention/(query|key|value)/(kernel|bias)$")
_HEADS_FIRST = re.compile(r"/self_attention/attention_output/kernel$")


def _matrix_shape(name, shape):
    """The shape bert_tf holds variable `name` in: per-head axes merged into one."""
    if (match := _HEADS_LAST.search(name)) and len(shape) == (3 if match[2] == "kernel" else 2):
        return shape[:-2] + (shape[-2] * shape[-1],)
    if _HEADS_FIRST.search(name) and len(shape) == 3:
        return (shape[0] * shape[1], shape[2])
    return shape


def model_garden_shape(name, shape, num_heads):
    """The inverse of `_matrix_shape`: the shape Model Garden holds variable `name` in, its
    `[H]` head axis split into `[N, H/N]` (what bert_tf's TF Hub export writes)."""
    shape = tuple(shape)
    if (match := _HEADS_LAST.search(name)) and len(shape) == (2 if match[2] == "kernel" else 1):
        return shape[:-1] + (num_heads, shape[-1] // num_heads)
    if _HEADS_FIRST.search(name) and len(shape) == 2:
        return (num_heads, shape[0] // num_heads, shape[1])
    return shape


def table_names(variables):
    """The SavedModel's variable names as `TABLE` spells them, by name: the masked-LM head's
    scope (`bert/cls/predictions/...`) cut to `cls/predictions/...`."""
    names = {}
    for name in variables:
        start = name.find(_MASKED_LM)
        names[name[start:] if start > 0 else name] = name
    return names


def tensor_source(contents):
    """The SavedModel's variables as a `TensorSource` named as `TABLE` spells them, in
    bert_tf's shapes; messages give the SavedModel's own names."""
    names = table_names(contents.variables)
    shapes = {name: _matrix_shape(name, contents.variables[saved])
              for name, saved in names.items()}

    def read(name):
        return np.reshape(contents.read(names[name]), shapes[name])

    return TensorSource(shapes, read, where=contents.checkpoint_prefix, labels=names)


def has_masked_lm(variables):
    """Whether the SavedModel holds the `.mlm` sub-object's masked-LM head."""
    return _MASKED_LM_BIAS in table_names(variables)


def is_bert_encoder(variables):
    """Whether the variables look like a Model Garden BERT encoder's."""
    return _WORD_EMBEDDINGS in variables and "pooler_transform/kernel" in variables


def _shape(variables, name, rank, where):
    shape = variables.get(name)
    if shape is None or len(shape) != rank:
        raise CheckpointError(f"Checkpoint {where}: expected a {rank}-D variable `{name}` of a "
                              f"TF Hub BERT encoder; found {shape and list(shape)}.")
    return shape


def infer_config(variables, hidden_act, where):
    """The `BertConfig` the encoder's variable shapes imply (dropout and initializer keep
    their defaults: they do not change a forward pass)."""
    if _EMBEDDING_PROJECTION in variables:
        raise CheckpointError(
            f"Checkpoint {where}: `{_EMBEDDING_PROJECTION}` projects embeddings of width "
            f"{variables[_EMBEDDING_PROJECTION][0]} to the hidden size; bert_tf's BERT has "
            "embeddings as wide as its layers.")
    vocab_size, hidden_size = _shape(variables, _WORD_EMBEDDINGS, 2, where)
    layers = sorted({int(m.group(1)) for name in variables
                     if (m := re.match(r"transformer/layer_(\d+)/", name))})
    if layers != list(range(len(layers))) or not layers:
        raise CheckpointError(f"Checkpoint {where}: transformer layers {layers}; expected "
                              "transformer/layer_0 ... layer_N-1.")
    query = "transformer/layer_0/self_attention/query/kernel"
    _, num_heads, head_size = _shape(variables, query, 3, where)
    if num_heads * head_size != hidden_size:
        raise CheckpointError(f"Checkpoint {where}: `{query}` has {num_heads} heads of size "
                              f"{head_size}; bert_tf's heads split the hidden size "
                              f"{hidden_size}.")
    return BertConfig(
        vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=len(layers),
        num_attention_heads=num_heads,
        intermediate_size=_shape(variables, "transformer/layer_0/intermediate/kernel", 2,
                                 where)[1],
        hidden_act=hidden_act,
        max_position_embeddings=_shape(variables, "position_embedding/embeddings", 2, where)[0],
        type_vocab_size=_shape(variables, "type_embeddings/embeddings", 2, where)[0])
