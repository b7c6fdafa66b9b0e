"""Exports any bert_tf model, a folder or one in memory, as an ONNX model for ONNX Runtime.

`export_onnx(model, output_dir)` takes any folder `from_pretrained` reads (a model
directory, a Hugging Face or sentence-transformers folder, a google-research checkpoint...)
or a model in memory (`BertEncoder`, `BertClassifier`, `BertTokenClassifier`,
`BertSpanLabeler`, and the raw-text `TextClassifier`, `TokenClassifier`, `SentenceEncoder`),
reads its weights and writes `output_dir/model.onnx` (the graph of `onnx_graph`) and
`export_metadata.json` beside it. With `text_input` the model takes strings
(`onnx_text`: the tokenizer in the graph); with `quantize="int8"` its MatMuls and
attention hold int8 weights (ONNX Runtime's dynamic quantization).

Example:
>>> export = export_onnx("all-MiniLM-L6-v2/", "/tmp/minilm_onnx", text_input=True)  # doctest: +SKIP
>>> export.head, export.outputs                                                    # doctest: +SKIP
('sentence_encoder', ['embedding'])
"""

import dataclasses
import json
import os
import shutil
import tempfile

import numpy as np
from absl import logging

from bert_tf.errors import require_extra
from bert_tf.export import onnx_graph, onnx_text
from bert_tf.export.onnx_graph import DEFAULT_OPSET, ONNX_HEADS, EncoderWeights, HeadSpec
from bert_tf.export.serving_module import ExportError
from bert_tf.models import BertClassifier, BertEncoder, BertSpanLabeler, BertTokenClassifier
from bert_tf.options import option

MODEL_FILE = "model.onnx"
METADATA_FILE = "export_metadata.json"
HEAD_CHOICES = ("auto",) + ONNX_HEADS
QUANTIZATIONS = ("none", "int8")


@dataclasses.dataclass
class OnnxExportOptions:
    """What tools/export_onnx.py exports, and how (the arguments of `export_onnx`)."""

    model: str = option(
        None, "Any checkpoint folder bert_tf reads: a model directory, a Hugging Face or "
        "sentence-transformers folder, a google-research checkpoint...", required=True)
    output_dir: str = option(None, "The folder to write model.onnx and export_metadata.json "
                             "to (refused if it holds a model.onnx).", required=True)
    head: str = option(
        "auto", "What the model computes: auto (what the folder holds; a sentence-transformers "
        "folder: sentence_encoder), or one of " + ", ".join(ONNX_HEADS) + ".",
        choices=HEAD_CHOICES)
    text_input: bool = option(
        False, "Take strings (text [batch]) and tokenize inside the graph with "
        "onnxruntime-extensions' BertTokenizer op, instead of the three id inputs.")
    quantize: str = option("none", "none (float32) or int8 (ONNX Runtime's dynamic "
                           "quantization: int8 weights, about 4x smaller).",
                           choices=QUANTIZATIONS)
    opset: int = option(DEFAULT_OPSET, f"The ai.onnx opset to write ({onnx_graph.MIN_OPSET} "
                        "or newer).")
    ids_dtype: str = option("int32", "The dtype of the id inputs: int32 (TF Hub's) or int64 "
                            "(what Hugging Face tokenizers give).", choices=onnx_graph.IDS_DTYPES)
    seq_length: int = option(
        None, "--text_input: the longest packed sequence (default: the folder's "
        "max_seq_length, else 128).", lower_bound=3)


@dataclasses.dataclass
class OnnxSource:
    """What a graph is made of, whichever kind of model it came from.

    Attributes:
      where: the folder, or the model's class, for messages.
      encoder: the `BertEncoder`.
      held: what the model holds beyond the encoder: a `model_dir.HEADS` head, or
        "sentence_encoder" (a sentence-transformers folder, a `SentenceEncoder`).
      dense: the task head's (kernel, bias), or None.
      label_names: class or tag names, or None.
      pooling: (pooling, normalize) of a sentence encoder, or None.
      tokens: the WordPiece vocabulary, or None (no text input possible).
      lower_case: the tokenizer's casing.
      max_seq_length: the length the model was trained with, or None.
      text_pair: the model takes text pairs (a pair `TextClassifier`).
    """

    where: str
    encoder: BertEncoder
    held: str
    dense: tuple = None
    label_names: list = None
    pooling: tuple = None
    tokens: list = None
    lower_case: bool = True
    max_seq_length: int = None
    text_pair: bool = False


@dataclasses.dataclass
class OnnxExport:
    """What `export_onnx` wrote: `path`, its `head`, input and output names, `quantize`."""

    path: str
    head: str
    inputs: list
    outputs: list
    quantize: str
    text_input: bool
    label_names: list = None


def _numpy(variable):
    return np.asarray(variable.numpy(), np.float32)


def _dense(layer):
    return _numpy(layer.kernel), _numpy(layer.bias)


def _norm(layer):
    return _numpy(layer.gamma), _numpy(layer.beta)


def encoder_weights(encoder):
    """The `EncoderWeights` of a `BertEncoder` (float32, whatever its dtype policy)."""
    config, embeddings = encoder.config, encoder.embeddings
    layers = []
    for block in encoder.blocks:
        attention = block.attention
        qkv = [_dense(layer) for layer in (attention.query, attention.key, attention.value)]
        layers.append(onnx_graph.LayerWeights(
            qkv_kernel=np.concatenate([kernel for kernel, _ in qkv], axis=1),
            qkv_bias=np.concatenate([bias for _, bias in qkv]),
            attention_output=_dense(attention.output_dense),
            attention_norm=_norm(block.attention_layer_norm),
            intermediate=_dense(block.intermediate), output=_dense(block.output_dense),
            output_norm=_norm(block.output_layer_norm)))
    return EncoderWeights(
        num_heads=config.num_attention_heads, hidden_act=config.hidden_act,
        layer_norm_eps=config.layer_norm_eps,
        word_embeddings=_numpy(embeddings.word_embeddings.embeddings),
        position_embeddings=_numpy(embeddings.position_embeddings),
        token_type_embeddings=_numpy(embeddings.token_type_embeddings.embeddings),
        embedding_norm=_norm(embeddings.layer_norm), layers=layers,
        pooler=_dense(encoder.pooler))


def _read_tokens(vocab_file):
    from bert_tf.tokenization.vocab import load_vocab

    return load_vocab(vocab_file)


def source_of_folder(folder):
    """An `OnnxSource` of any checkpoint folder bert_tf reads (`load_pretrained`)."""
    from bert_tf.checkpoints.building import load_pretrained

    pretrained = load_pretrained(folder)
    held, pooling = pretrained.head, None
    if pretrained.sentence_pooling is not None:
        held = "sentence_encoder"
        pooling = (pretrained.sentence_pooling.pooling, pretrained.sentence_pooling.normalize)
    tokens = None
    if pretrained.vocab is not None:
        tokens = (pretrained.vocab.tokens if pretrained.vocab.vocab_file is None
                  else _read_tokens(pretrained.vocab.vocab_file))
    return OnnxSource(
        where=folder, encoder=pretrained.encoder, held=held,
        dense=None if pretrained.task_head is None else _dense(pretrained.task_head),
        label_names=pretrained.label_names, pooling=pooling, tokens=tokens,
        lower_case=pretrained.lower_case,
        max_seq_length=(pretrained.sentence_pooling.max_seq_length
                        if pretrained.sentence_pooling is not None
                        and pretrained.sentence_pooling.max_seq_length
                        else pretrained.max_seq_length))


def source_of_model(model):
    """An `OnnxSource` of a bert_tf model in memory (see the module docstring)."""
    where = type(model).__name__
    if isinstance(model, BertEncoder):
        return OnnxSource(where, model, "encoder")
    preprocessor = getattr(model, "preprocessor", None)
    text = {}
    if preprocessor is not None:
        with preprocessor.vocab_path() as vocab_file:
            text = dict(tokens=_read_tokens(vocab_file), lower_case=preprocessor.lower_case,
                        max_seq_length=preprocessor.seq_length)
    if isinstance(model, BertTokenClassifier):
        held = "token_classifier"
    elif isinstance(model, BertClassifier):
        held = "classifier"
    elif isinstance(model, BertSpanLabeler):
        held = "span_labeler"
    elif hasattr(model, "pooling") and hasattr(model, "normalize"):  # a SentenceEncoder
        return OnnxSource(where, model.encoder, "sentence_encoder",
                          pooling=(model.pooling, model.normalize), **text)
    else:
        raise ExportError(f"{where} has no ONNX export; export a BertEncoder, BertClassifier, "
                          "BertTokenClassifier, BertSpanLabeler or a raw-text task model.")
    label_names = getattr(model, "label_names", None)
    return OnnxSource(where, model.encoder, held, dense=_dense(model.head),
                      label_names=None if label_names is None else list(label_names),
                      text_pair=bool(getattr(model, "text_pair", False)), **text)


def resolve_head(source, head):
    """The `HeadSpec` of `head` ("auto": what the source holds) on `source`.

    Raises:
      ExportError: a head the source does not hold (a task head it lacks; every encoder
        gives `encoder` and `sentence_encoder`).
    """
    if head not in HEAD_CHOICES:
        raise ExportError(f"--head={head} is not an ONNX head; choose one of "
                          f"{', '.join(HEAD_CHOICES)}.")
    if head == "auto":
        head = "encoder" if source.held == "pretrainer" else source.held
        if head not in ONNX_HEADS:
            raise ExportError(f"{source.where} holds a {source.held} head, which has no ONNX "
                              f"export; pass --head=encoder or --head=sentence_encoder.")
    if head == "sentence_encoder":
        pooling, normalize = source.pooling or ("mean", True)
        return HeadSpec(head, pooling=pooling, normalize=normalize)
    if head in ("classifier", "token_classifier", "span_labeler") and head != source.held:
        raise ExportError(f"--head={head}: {source.where} holds no {head} head (it holds "
                          f"{source.held}); pass --head=auto or a head it holds.")
    return HeadSpec(head, dense=source.dense if head != "encoder" else None)


def _check_output_dir(output_dir):
    path = os.path.join(output_dir, MODEL_FILE)
    if os.path.exists(path):
        raise ExportError(f"{output_dir} already holds a model ({MODEL_FILE}); nothing was "
                          "overwritten. Pass a new --output_dir or remove that one.")
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ExportError(f"--output_dir={output_dir} is a file, not a folder.")


def _quantize_int8(model):
    """ONNX Runtime's dynamic int8 quantization of `model` (a ModelProto): int8 weights,
    activations quantized per call."""
    onnx = require_extra("onnx", extra="onnx")
    quantization = require_extra("onnxruntime.quantization", extra="onnx")
    with tempfile.TemporaryDirectory(prefix="bert_tf_onnx_") as folder:
        source, target = os.path.join(folder, "float.onnx"), os.path.join(folder, "int8.onnx")
        onnx.save(model, source)
        # Per channel: a fine-tuned MiniLM classifier's int8 predictions agree with float32's
        # on 97.4% of 500 held-out sentences, 95.6% per tensor (docs/design.md, "ONNX").
        # DefaultTensorType: shape inference knows no type past the tokenizer op.
        quantization.quantize_dynamic(
            source, target, weight_type=quantization.QuantType.QInt8, per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        return onnx.load(target)


def export_onnx(model, output_dir, head="auto", text_input=False, quantize="none",
                opset=DEFAULT_OPSET, ids_dtype="int32", seq_length=None):
    """Writes `output_dir/model.onnx` and `export_metadata.json` of `model`'s `head`.

    Args:
      model: a checkpoint folder bert_tf reads, or a bert_tf model in memory.
      output_dir: the folder to write (created; refused if it holds a model.onnx).
      head: "auto" (what the model holds; a pretraining folder gives "encoder", a
        sentence-transformers folder "sentence_encoder") or one of `ONNX_HEADS`.
      text_input: take strings (`text [B]`) and tokenize in the graph, instead of the ids.
      quantize: "none" (float32) or "int8".
      opset: the ai.onnx opset (`onnx_graph.MIN_OPSET` or newer).
      ids_dtype: "int32" or "int64", the dtype of the ids inputs.
      seq_length: text_input: the longest packed sequence (default: the model's
        max_seq_length, else 128, at most max_position_embeddings).

    Returns:
      An `OnnxExport`.

    Raises:
      ExportError: a head the model does not hold, an output folder that holds a model, a
        vocabulary the tokenizer op cannot hold, a quantization other than int8, an opset
        below the graph's.
      MissingExtraError: onnx or onnxruntime is not installed (`pip install bert_tf[onnx]`).
    """
    if quantize not in QUANTIZATIONS:
        raise ExportError(f"--quantize={quantize} is not a quantization of the ONNX export; "
                          f"choose one of {', '.join(QUANTIZATIONS)}.")
    onnx_graph.check_opset(opset)
    _check_output_dir(output_dir)
    source = (source_of_folder(os.fspath(model)) if isinstance(model, (str, os.PathLike))
              else source_of_model(model))
    spec = resolve_head(source, head)
    weights = encoder_weights(source.encoder)
    metadata = {}
    if source.label_names is not None and spec.head in ("classifier", "token_classifier"):
        metadata["label_names"] = json.dumps(source.label_names)
    text = None
    if text_input:
        if source.tokens is None:
            raise ExportError(f"--text_input: {source.where} has no vocabulary; export with "
                              "ids in (no --text_input).")
        if source.text_pair:
            # The op tokenizes a pair without truncating it: rows past seq_length.
            raise ExportError(f"--text_input: {source.where} takes text pairs, which "
                              "onnxruntime-extensions' BertTokenizer op does not truncate; "
                              "export with ids in (no --text_input).")
        onnx_text.check_vocab(source.tokens, source.where)
        max_length = source.encoder.config.max_position_embeddings
        seq_length = seq_length or source.max_seq_length or min(128, max_length)
        if not 2 < seq_length <= max_length:
            raise ExportError(f"--seq_length must be in 3..{max_length} (the model's "
                              f"max_position_embeddings); received {seq_length}.")
        text = onnx_graph.TextSpec(source.tokens, source.lower_case, seq_length)
        metadata.update(seq_length=seq_length, lower_case=source.lower_case)
    proto = onnx_graph.build_onnx_model(weights, spec, ids_dtype, opset, metadata, text)
    if quantize == "int8":
        proto = _quantize_int8(proto)
    onnx = require_extra("onnx", extra="onnx")
    export = OnnxExport(
        path=os.path.join(output_dir, MODEL_FILE), head=spec.head,
        inputs=[value.name for value in proto.graph.input],
        outputs=[value.name for value in proto.graph.output], quantize=quantize,
        text_input=bool(text_input), label_names=json.loads(metadata.get("label_names", "null")))
    os.makedirs(output_dir, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".onnx-", dir=output_dir)
    try:
        onnx.save(proto, os.path.join(staging, MODEL_FILE))
        with open(os.path.join(staging, METADATA_FILE), "w", encoding="utf-8") as f:
            json.dump(dict(dataclasses.asdict(export), path=MODEL_FILE, opset=int(opset),
                           ids_dtype=ids_dtype, source=str(source.where),
                           pooling=spec.pooling if spec.head == "sentence_encoder" else None,
                           seq_length=metadata.get("seq_length")), f, indent=2)
            f.write("\n")
        for name in (METADATA_FILE, MODEL_FILE):  # model.onnx last: its presence means done
            os.replace(os.path.join(staging, name), os.path.join(output_dir, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logging.info("Wrote %s (--head=%s, %s in, --quantize=%s).", export.path, spec.head,
                 "text" if text_input else "ids", quantize)
    return export
