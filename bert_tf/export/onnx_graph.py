"""The ONNX graph of a BERT encoder and its head, built from numpy weights, already fused.

The graph is the one ONNX Runtime's transformer optimizer makes of `torch.onnx.export`'s BERT
(`optimize_model(model_type="bert")`), written directly: `EmbedLayerNormalization`, then per
layer one `Attention` (Q, K and V as one `[H, 3H]` MatMul), `SkipLayerNormalization` after
the attention and the feed-forward output, and `BiasGelu` (exact, erf: `hidden_act="gelu"`)
or `FastGelu` (the tanh approximation: `gelu_new`, `gelu_approximate`, `gelu_pytorch_tanh`),
all com.microsoft operators that ONNX Runtime and OpenVINO run; weights are initializers.
Nothing is left for an optimizer to find, and no converter of TensorFlow graphs is involved
(tf2onnx does not convert Keras 3 models: docs/design.md, "ONNX").

Inputs: `input_word_ids`, `input_mask`, `input_type_ids` (`[batch, sequence]`, int32 or
int64; both dimensions dynamic). Outputs by head, named as the SavedModel export names them:

| head | outputs |
|---|---|
| encoder | `sequence_output [B, S, H]` (zero at padding), `pooled_output [B, H]` |
| classifier | `logits [B, C]`, `probabilities [B, C]` (not for a regressor, C = 1) |
| token_classifier | `logits [B, S, C]`, `label_ids` int32 `[B, S]` |
| span_labeler | `start_logits`, `end_logits [B, S]` |
| sentence_encoder | `embedding [B, H]` (mean, max, cls or cls_token pooling; L2-normalized) |

Example:
>>> model = build_onnx_model(weights, HeadSpec("encoder"))  # doctest: +SKIP
>>> onnx.save(model, "model.onnx")                          # doctest: +SKIP
"""

import dataclasses

import numpy as np

from bert_tf.errors import require_extra
from bert_tf.export import onnx_text
from bert_tf.export.onnx_builder import MS_DOMAIN, GraphBuilder
from bert_tf.export.serving_module import ExportError

ONNX_HEADS = ("encoder", "classifier", "token_classifier", "span_labeler", "sentence_encoder")
IDS_DTYPES = ("int32", "int64")
# Reduce ops take their axes as an input from opset 18 (ReduceMax, ReduceL2 in the heads).
MIN_OPSET = 18
DEFAULT_OPSET = 18
ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
POOLINGS = ("cls", "cls_token", "mean", "max")
# The fused feed-forward activation for each `hidden_act` ONNX Runtime fuses.
_FUSED_GELU = {"gelu": "BiasGelu", "gelu_new": "FastGelu", "gelu_approximate": "FastGelu",
               "gelu_pytorch_tanh": "FastGelu"}
_PLAIN_ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh"}
# keras.ops.normalize's floor on the norm (Keras's epsilon) and max pooling's padding score.
_NORM_EPSILON = 1e-7
_MAX_POOLING_PADDING = -1e9


@dataclasses.dataclass
class LayerWeights:
    """One Transformer block's float32 weights (kernels `[in, out]`)."""

    qkv_kernel: np.ndarray  # [H, 3H]: query, key, value side by side
    qkv_bias: np.ndarray  # [3H]
    attention_output: tuple  # (kernel [H, H], bias [H])
    attention_norm: tuple  # (gamma, beta)
    intermediate: tuple  # (kernel [H, I], bias [I])
    output: tuple  # (kernel [I, H], bias [H])
    output_norm: tuple  # (gamma, beta)


@dataclasses.dataclass
class EncoderWeights:
    """A BERT encoder as numpy: what `build_onnx_model` writes into the graph.

    Attributes:
      num_heads: attention heads N.
      hidden_act: the config's `hidden_act`.
      layer_norm_eps: LayerNorm epsilon.
      word_embeddings, position_embeddings, token_type_embeddings: `[V, H]`, `[P, H]`, `[T, H]`.
      embedding_norm: (gamma, beta) of the embeddings' LayerNorm.
      layers: a `LayerWeights` per block.
      pooler: (kernel [H, H], bias [H]) of the tanh pooler.
    """

    num_heads: int
    hidden_act: str
    layer_norm_eps: float
    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    embedding_norm: tuple
    layers: list
    pooler: tuple


@dataclasses.dataclass
class HeadSpec:
    """What follows the encoder.

    Attributes:
      head: one of `ONNX_HEADS`.
      dense: (kernel [H, C], bias [C]) of a task head, else None.
      pooling: sentence_encoder's pooling, one of `POOLINGS`.
      normalize: sentence_encoder: L2-normalize the embedding.
    """

    head: str
    dense: tuple = None
    pooling: str = "mean"
    normalize: bool = True


@dataclasses.dataclass
class TextSpec:
    """Strings in: the tokenizer's vocabulary (`tokens`), casing and packed length."""

    tokens: list
    lower_case: bool
    seq_length: int


def check_opset(opset):
    """Raises `ExportError` for an opset the graph cannot be written in."""
    onnx = require_extra("onnx", extra="onnx")
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= int(opset) <= newest:
        raise ExportError(f"--opset={opset} cannot hold this graph: it needs opset {MIN_OPSET} "
                          f"or newer (Reduce ops with axes as inputs), and onnx "
                          f"{onnx.__version__} writes at most {newest}.")


def _dense(graph, x, dense, name):
    """`x @ kernel + bias`."""
    kernel, bias = dense
    product = graph.op("MatMul", [x, graph.constant(kernel, f"{name}_kernel")], name=name)
    return graph.op("Add", [product, graph.constant(bias, f"{name}_bias")], name=f"{name}_bias")


def _feed_forward_activation(graph, x, bias, hidden_act, name):
    """The activation of `x + bias`, fused with the bias where ONNX Runtime fuses it."""
    bias = graph.constant(bias, f"{name}_bias")
    if hidden_act in _FUSED_GELU:
        return graph.op(_FUSED_GELU[hidden_act], [x, bias], domain=MS_DOMAIN, name=name)
    summed = graph.op("Add", [x, bias], name=f"{name}_add")
    if hidden_act in _PLAIN_ACTIVATIONS:
        return graph.op(_PLAIN_ACTIVATIONS[hidden_act], [summed], name=name)
    if hidden_act in ("swish", "silu"):
        return graph.op("Mul", [summed, graph.op("Sigmoid", [summed])], name=name)
    raise ExportError(f"hidden_act {hidden_act!r} has no ONNX export; bert_tf writes "
                      f"{', '.join(sorted([*_FUSED_GELU, *_PLAIN_ACTIVATIONS, 'swish', 'silu']))}.")


def _encoder(graph, weights, word_ids, type_ids, mask):
    """Embeddings and blocks on int32 `[B, S]` inputs: the last hidden state `[B, S, H]`."""
    eps = float(weights.layer_norm_eps)
    hidden = graph.op(
        "EmbedLayerNormalization",
        [word_ids, type_ids, graph.constant(weights.word_embeddings, "word_embeddings"),
         graph.constant(weights.position_embeddings, "position_embeddings"),
         graph.constant(weights.token_type_embeddings, "token_type_embeddings"),
         *(graph.constant(w, f"embeddings_norm_{n}")
           for w, n in zip(weights.embedding_norm, ("gamma", "beta")))],
        outputs=2, domain=MS_DOMAIN, name="embeddings", epsilon=eps)[0]
    for index, layer in enumerate(weights.layers):
        name = f"layer_{index}"
        attended = graph.op(
            "Attention", [hidden, graph.constant(layer.qkv_kernel, f"{name}_qkv_kernel"),
                          graph.constant(layer.qkv_bias, f"{name}_qkv_bias"), mask],
            domain=MS_DOMAIN, name=f"{name}_attention", num_heads=int(weights.num_heads))
        hidden = _project_add_and_normalize(graph, attended, hidden, layer.attention_output,
                                            layer.attention_norm, f"{name}_attention_out",
                                            f"{name}_attention_norm", eps)
        kernel, bias = layer.intermediate
        intermediate = graph.op("MatMul", [hidden, graph.constant(kernel, f"{name}_intermediate")])
        activated = _feed_forward_activation(graph, intermediate, bias, weights.hidden_act,
                                             f"{name}_activation")
        hidden = _project_add_and_normalize(graph, activated, hidden, layer.output,
                                            layer.output_norm, f"{name}_output",
                                            f"{name}_output_norm", eps)
    return hidden


def _project_add_and_normalize(graph, inputs, residual, dense, norm, dense_name, norm_name,
                               eps):
    """`LayerNorm(inputs @ kernel + bias + residual)`: a MatMul, then one
    SkipLayerNormalization that adds the bias and the residual (as ORT's optimizer fuses it)."""
    kernel, bias = dense
    projected = graph.op("MatMul", [inputs, graph.constant(kernel, dense_name)])
    return graph.op(
        "SkipLayerNormalization",
        [projected, residual, *(graph.constant(w, norm_name) for w in (*norm, bias))],
        domain=MS_DOMAIN, name=norm_name, epsilon=eps)


def _first_token(graph, hidden, float_mask):
    """The [CLS] state `[B, H]`, zero where position 0 is padding (as bert_tf's encoder)."""
    first = graph.op("Gather", [hidden, graph.constant(0, "first", np.int64)], axis=1)
    return graph.op("Mul", [first, graph.op("Gather", [float_mask, graph.constant(
        [0], "first_column", np.int64)], axis=1)])  # [B, H] * [B, 1]


def _head_outputs(graph, weights, spec, hidden, float_mask):
    """`{output name: node output}` of `spec.head` on the last hidden state."""
    axis_one = lambda: graph.constant([1], "axis_one", np.int64)
    mask3 = lambda: graph.op("Unsqueeze", [float_mask, graph.constant([-1], "axis", np.int64)])

    def pooled():
        return graph.op("Tanh", [_dense(graph, _first_token(graph, hidden, float_mask),
                                        weights.pooler, "pooler")], name="pooled_output")

    def masked_sequence():  # bert_tf's sequence output is zero at padding
        return graph.op("Mul", [hidden, mask3()], name="masked_sequence")

    if spec.head == "encoder":
        return {"sequence_output": masked_sequence(), "pooled_output": pooled()}
    if spec.head == "classifier":
        logits = _dense(graph, pooled(), spec.dense, "logits")
        if spec.dense[1].shape[0] == 1:  # a regressor: the logit is the prediction
            return {"logits": logits}
        return {"logits": logits, "probabilities": graph.op("Softmax", [logits], axis=-1)}
    if spec.head == "token_classifier":
        logits = _dense(graph, masked_sequence(), spec.dense, "logits")
        label_ids = graph.op("ArgMax", [logits], axis=-1, keepdims=0)
        return {"logits": logits,
                "label_ids": graph.op("Cast", [label_ids], to=graph.onnx.TensorProto.INT32)}
    if spec.head == "span_labeler":
        logits = _dense(graph, masked_sequence(), spec.dense, "span_logits")  # [B, S, 2]
        start, end = graph.op("Split", [logits], outputs=2, axis=-1, num_outputs=2)
        squeeze = lambda x: graph.op("Squeeze", [x, graph.constant([-1], "axis", np.int64)])
        return {"start_logits": squeeze(start), "end_logits": squeeze(end)}
    if spec.head != "sentence_encoder":
        raise ExportError(f"Unknown head {spec.head!r}; choose one of {', '.join(ONNX_HEADS)}.")
    if spec.pooling == "cls":
        embedding = pooled()
    elif spec.pooling == "cls_token":
        embedding = _first_token(graph, hidden, float_mask)
    elif spec.pooling == "mean":
        summed = graph.op("ReduceSum", [masked_sequence(), axis_one()], keepdims=0)
        count = graph.op("Max", [graph.op("ReduceSum", [float_mask, axis_one()], keepdims=1),
                                 graph.constant(1.0, "one")])
        embedding = graph.op("Div", [summed, count], name="mean_pooling")
    elif spec.pooling == "max":
        padding = graph.op("Mul", [graph.op("Sub", [graph.constant(1.0, "one"), mask3()]),
                                   graph.constant(_MAX_POOLING_PADDING, "padding_score")])
        embedding = graph.op("ReduceMax", [graph.op("Add", [hidden, padding]), axis_one()],
                             keepdims=0, name="max_pooling")
    else:
        raise ExportError(f"pooling must be one of {', '.join(POOLINGS)}; received "
                          f"{spec.pooling!r}.")
    if spec.normalize:
        norm = graph.op("ReduceL2", [embedding, graph.constant([-1], "axis", np.int64)],
                        keepdims=1)
        norm = graph.op("Max", [norm, graph.constant(_NORM_EPSILON, "epsilon")])
        embedding = graph.op("Div", [embedding, norm], name="normalize")
    return {"embedding": embedding}


def build_onnx_model(weights, spec, ids_dtype="int32", opset=DEFAULT_OPSET, metadata=None,
                     text=None):
    """The ONNX model of `weights` (an `EncoderWeights`) and the head of `spec` (`HeadSpec`).

    Args:
      weights: the encoder's float32 weights.
      spec: the head.
      ids_dtype: "int32" (TF Hub's) or "int64" (what Hugging Face tokenizers return).
      opset: the ai.onnx opset, `MIN_OPSET` or newer.
      metadata: strings stored as the model's metadata_props (head, label names...).
      text: a `TextSpec`: the model takes strings (`text [B]`, `onnx_text`) instead of ids,
        and sequence-shaped heads also output the `input_mask` they ran with.

    Raises:
      ExportError: an unknown head, pooling, ids dtype or activation, or too old an opset.
    """
    onnx = require_extra("onnx", extra="onnx")
    check_opset(opset)
    if spec.head not in ONNX_HEADS:
        raise ExportError(f"Unknown head {spec.head!r}; choose one of {', '.join(ONNX_HEADS)}.")
    if ids_dtype not in IDS_DTYPES:
        raise ExportError(f"ids_dtype must be one of {', '.join(IDS_DTYPES)}; received "
                          f"{ids_dtype!r}.")
    graph = GraphBuilder()
    int32 = onnx.TensorProto.INT32
    if text is None:
        dtype = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(ids_dtype))
        inputs = [onnx.helper.make_tensor_value_info(name, dtype, ["batch", "sequence"])
                  for name in ENCODER_INPUTS]
        # The fused ops take int32 ids and mask.
        word_ids, mask, type_ids = (
            name if ids_dtype == "int32" else graph.op("Cast", [name], to=int32)
            for name in ENCODER_INPUTS)
    else:
        inputs = [onnx.helper.make_tensor_value_info(onnx_text.TEXT_INPUT,
                                                     onnx.TensorProto.STRING, ["batch"])]
        word_ids, mask = (graph.op("Cast", [x], to=int32) for x in onnx_text.tokenizer_nodes(
            graph, text.tokens, text.lower_case, text.seq_length, onnx_text.TEXT_INPUT))
        type_ids = graph.op("ConstantOfShape", [graph.op("Shape", [mask])],
                            value=onnx.numpy_helper.from_array(np.zeros([1], np.int32)))
    hidden = _encoder(graph, weights, word_ids, type_ids, mask)
    float_mask = graph.op("Cast", [mask], to=onnx.TensorProto.FLOAT)
    outputs = _head_outputs(graph, weights, spec, hidden, float_mask)
    if text is not None and spec.head in ("encoder", "token_classifier", "span_labeler"):
        outputs["input_mask"] = graph.op("Identity", [mask])
    graph.rename(outputs)
    output_infos = [onnx.helper.make_tensor_value_info(
        name, int32 if name in ("label_ids", "input_mask") else onnx.TensorProto.FLOAT, None)
        for name in outputs]
    return graph.model(inputs, output_infos, int(opset), dict(metadata or {}, head=spec.head),
                       domains=() if text is None else (onnx_text.CONTRIB_DOMAIN,))
