"""The ONNX Runtime serving peer without PyTorch: a BERT graph written from the HF weights.

`serving_systems` exports the ONNX Runtime peer's model with `torch.onnx.export`. Where
`.venv-ref` has no torch (a CPU torch wheel is not on PyPI; the default one pulls gigabytes
of CUDA), this module writes the same computation with `onnx.helper`, node for node in the
pattern `torch.onnx.export` emits for Hugging Face's `BertModel` (MatMul + Add projections,
Reshape/Transpose head splits, Div by sqrt(d), additive mask, Softmax, erf GELU, Add +
LayerNormalization), so ONNX Runtime's transformer optimizer fuses it the same way
(Attention, SkipLayerNormalization, BiasGelu). Output: `last_hidden_state`. Dev-only: needs
`onnx`, `numpy` and `safetensors` (in `.venv-ref`), never TensorFlow.
"""

import json
import math
import os

import numpy as np


def _hf_weights(hf_dir):
    from safetensors.numpy import load_file

    weights = load_file(os.path.join(hf_dir, "model.safetensors"))
    return {name.removeprefix("bert."): value for name, value in weights.items()}


def export_onnx_from_safetensors(hf_dir, path, opset=17):
    """Writes `path`: HF `BertModel` (config.json + model.safetensors of `hf_dir`) as ONNX."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    if config.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"Only exact GELU is written; {hf_dir} has {config['hidden_act']}.")
    weights = _hf_weights(hf_dir)
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_size = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)
    nodes, initializers = [], []

    def const(name, value, dtype=np.float32):
        initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def weight(name, transpose=False):
        value = weights[name]
        return const(name, value.T if transpose else value)

    def linear(x, prefix, out):
        product = node("MatMul", [x, weight(f"{prefix}.weight", transpose=True)], f"{out}_mm")
        return node("Add", [product, weight(f"{prefix}.bias")], out)

    def layer_norm(x, prefix, out):
        return node("LayerNormalization", [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")],
                    out, axis=-1, epsilon=eps)

    # Embeddings: word + position (0..S-1) + token type, LayerNorm.
    words = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "word_emb")
    seq = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), const("one_i", 1, np.int64)],
               "seq_len")
    position_ids = node("Range", [const("zero_i", 0, np.int64), seq, const("step_i", 1, np.int64)],
                        "position_ids")
    positions = node("Gather", [weight("embeddings.position_embeddings.weight"), position_ids],
                     "pos_emb")
    types = node("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"],
                 "type_emb")
    x = node("Add", [node("Add", [words, positions], "emb_wp"), types], "emb_sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb_ln")
    # Additive mask [B, 1, 1, S]: 0 for real tokens, a large negative number for padding.
    # (Unsqueeze, Unsqueeze, Cast, Sub, Mul: the order torch.onnx.export writes, which the
    # optimizer's attention fusion matches.)
    mask = node("Unsqueeze", ["attention_mask", const("axis1", [1], np.int64)], "mask_3d")
    mask = node("Unsqueeze", [mask, const("axis2", [2], np.int64)], "mask_4d")
    mask = node("Cast", [mask], "mask_f", to=TensorProto.FLOAT)
    mask = node("Mul", [node("Sub", [const("one_f", 1.0), mask], "mask_inv"),
                        const("mask_min", -10000.0)], "mask_add")
    split_shape = const("split_shape", [0, 0, heads, head_size], np.int64)
    merge_shape = const("merge_shape", [0, 0, hidden], np.int64)
    scale = const("scale", math.sqrt(head_size))
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(t, name, perm):
            return node("Transpose", [node("Reshape", [t, split_shape], f"{name}_r")], name,
                        perm=perm)
        q = heads_of(linear(x, f"{p}.attention.self.query", f"l{i}_q"), f"l{i}_qh", [0, 2, 1, 3])
        k = heads_of(linear(x, f"{p}.attention.self.key", f"l{i}_k"), f"l{i}_kt", [0, 2, 3, 1])
        v = heads_of(linear(x, f"{p}.attention.self.value", f"l{i}_v"), f"l{i}_vh", [0, 2, 1, 3])
        scores = node("Div", [node("MatMul", [q, k], f"l{i}_qk"), scale], f"l{i}_scaled")
        probs = node("Softmax", [node("Add", [scores, mask], f"l{i}_masked")], f"l{i}_probs",
                     axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v], f"l{i}_ctx")], f"l{i}_ctx_t",
                       perm=[0, 2, 1, 3])
        context = node("Reshape", [context, merge_shape], f"l{i}_ctx_m")
        attended = linear(context, f"{p}.attention.output.dense", f"l{i}_ao")
        x = layer_norm(node("Add", [attended, x], f"l{i}_ares"), f"{p}.attention.output.LayerNorm",
                       f"l{i}_aln")
        inner = linear(x, f"{p}.intermediate.dense", f"l{i}_in")
        erf = node("Erf", [node("Div", [inner, const(f"sqrt2_{i}", math.sqrt(2.0))], f"l{i}_div")],
                   f"l{i}_erf")
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, const(f"one_{i}", 1.0)],
                                                       f"l{i}_erf1")], f"l{i}_xg"),
                            const(f"half_{i}", 0.5)], f"l{i}_gelu")
        out = linear(gelu, f"{p}.output.dense", f"l{i}_out")
        x = layer_norm(node("Add", [out, x], f"l{i}_ores"), f"{p}.output.LayerNorm", f"l{i}_oln")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ids = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
           for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                           ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "bert", ids, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="pytorch")  # what the optimizer expects for BERT
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path
