"""Strings in: onnxruntime-extensions' `BertTokenizer` op in front of the ONNX encoder.

The op (domain `ai.onnx.contrib`) tokenizes one string per call into `[CLS] pieces [SEP]`,
truncated to `max_length`; a `Loop` runs it on each string of the batch, pads each row to
`seq_length`, and the batch is then cut to its longest row. The ids equal bert_tf's
tokenizer's (tensorflow-text, the google-research reference's ids) on ordinary text; the op
differs on a few edge cases that tests/export/test_onnx_text.py counts (docs/design.md,
"ONNX").

A session needs the extensions' ops registered:

    import onnxruntime, onnxruntime_extensions
    options = onnxruntime.SessionOptions()
    options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
    session = onnxruntime.InferenceSession("model.onnx", options)
    session.run(None, {"text": np.array(["Hello world"], dtype=object)})
"""

import numpy as np

from bert_tf.export.onnx_builder import GraphBuilder
from bert_tf.export.serving_module import ExportError
from bert_tf.tokenization import vocab as vocab_lib

CONTRIB_DOMAIN = "ai.onnx.contrib"
TEXT_INPUT = "text"
# Tokens the op looks up by name at load time (it fails to load without any of them).
_OP_SPECIAL_TOKENS = (vocab_lib.UNK, vocab_lib.SEP, vocab_lib.PAD, vocab_lib.CLS, vocab_lib.MASK)


def check_vocab(tokens, where):
    """Raises `ExportError` for a vocabulary the op cannot hold as bert_tf reads it.

    The op reads its vocabulary from one string split at "\\r" and "\\n", dropping empty
    lines, and needs the five special tokens by their BERT names.
    """
    missing = [token for token in _OP_SPECIAL_TOKENS if token not in set(tokens)]
    if missing:
        raise ExportError(f"--text_input: the vocabulary of {where} has no {', '.join(missing)}, "
                          "which onnxruntime-extensions' BertTokenizer op needs; export with "
                          "ids in (no --text_input).")
    for index, token in enumerate(tokens):
        if not token or "\r" in token or "\n" in token:
            raise ExportError(f"--text_input: token {index} {token!r} of the vocabulary of "
                              f"{where} cannot be held by onnxruntime-extensions' BertTokenizer "
                              "op (it splits its vocabulary at line breaks and drops empty "
                              "lines); export with ids in (no --text_input).")


def tokenizer_nodes(graph, tokens, lower_case, seq_length, text):
    """Adds the nodes from the string `[B]` input `text` to int64 `[B, W]` word ids and mask.

    Args:
      graph: the `onnx_graph.GraphBuilder` to add to.
      tokens: the WordPiece vocabulary (`check_vocab` first).
      lower_case: lower-case and strip accents (uncased BERT), as bert_tf's tokenizer does.
      seq_length: the longest packed sequence, [CLS] and [SEP] included.
      text: the name of the string input.

    Returns:
      `(word_ids, mask)`, W the batch's longest packed row (at most `seq_length`).
    """
    onnx = graph.onnx
    helper = onnx.helper
    int64 = onnx.TensorProto.INT64
    body = GraphBuilder(parent=graph)  # the Loop's body
    index = body.name("row")
    row = body.op("Gather", [text, body.op("Unsqueeze", [index, body.constant(
        [0], "axis", np.int64)])], axis=0)  # [1] string
    ids, _, mask = body.op(
        "BertTokenizer", [row], outputs=3, domain=CONTRIB_DOMAIN,
        vocab_file="\n".join(tokens), do_lower_case=int(lower_case),
        strip_accents=int(lower_case), max_length=int(seq_length))
    # Right-pad each row to seq_length: rows of one shape stack into the Loop's output.
    room = body.op("Sub", [body.constant([seq_length], "seq_length", np.int64),
                           body.op("Shape", [ids])])
    pads = body.op("Concat", [body.constant([0], "zero", np.int64), room], axis=0)
    padded_ids, padded_mask = (body.op("Pad", [x, pads]) for x in (ids, mask))
    condition = body.name("condition")
    body_outputs = [body.op("Identity", [condition])] + [padded_ids, padded_mask]
    loop_body = helper.make_graph(
        body.nodes, "tokenize_row",
        [helper.make_tensor_value_info(index, int64, []),
         helper.make_tensor_value_info(condition, onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(body_outputs[0], onnx.TensorProto.BOOL, []),
         *(helper.make_tensor_value_info(name, int64, [seq_length])
           for name in body_outputs[1:])])
    batch = graph.op("Gather", [graph.op("Shape", [text]), graph.constant(0, "batch", np.int64)])
    ids, mask = graph.op("Loop", [batch, ""], outputs=2, name="tokenize", body=loop_body)
    # Cut the batch to its longest row.
    width = graph.op("ReduceMax", [graph.op("ReduceSum", [mask, graph.constant(
        [1], "axis", np.int64)], keepdims=0)], keepdims=1)
    cut = lambda x: graph.op("Slice", [x, graph.constant([0], "start", np.int64), width,
                                      graph.constant([1], "axis", np.int64)])
    return cut(ids), cut(mask)


def tokenizer_model(tokens, lower_case, seq_length, opset):
    """An ONNX model of the tokenizer alone: `text [B]` in, int64 `input_word_ids` and
    `input_mask [B, W]` out (the front of every `--text_input` export, to check its ids)."""
    graph = GraphBuilder()
    onnx = graph.onnx
    word_ids, mask = tokenizer_nodes(graph, tokens, lower_case, seq_length, TEXT_INPUT)
    outputs = {"input_word_ids": graph.op("Identity", [word_ids]),
               "input_mask": graph.op("Identity", [mask])}
    graph.rename(outputs)
    return graph.model(
        [onnx.helper.make_tensor_value_info(TEXT_INPUT, onnx.TensorProto.STRING, ["batch"])],
        [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None)
         for name in outputs], opset, {}, domains=(CONTRIB_DOMAIN,))
