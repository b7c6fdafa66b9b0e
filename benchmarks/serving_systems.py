"""The systems that `--what=serving` compares, each built inside its own worker process.

Every system takes a list of raw strings and returns once the encoder has run on them,
tokenization included. The peers are the CPU runtimes a production user would deploy
instead; they are dev-only and imported here lazily, so this module imports in the
PyTorch venv (`.venv-ref`, no TensorFlow) as well as in bert_tf's:
- "bert_tf": the raw-text encoder SavedModel of `tools/export_saved_model.py` (each
  request packed to its own longest sentence; the encoder computes real tokens only);
- "bert_tf bfloat16": that export with `--dtype=bfloat16`;
- "bert_tf tflite", "bert_tf tflite int8": `tools/export_tflite.py --head=encoder`, float32
  and dynamic-range int8, in Python's TFLite interpreter on the same threads;
- "bert_tf onnx", "bert_tf onnx int8": `tools/export_onnx.py --head=encoder --text_input`
  (and `--quantize=int8`) under ONNX Runtime on the same threads: the tokenizer op and the
  fused encoder in one graph, strings in;
- "bert_tf onnx ids": `tools/export_onnx.py --head=encoder --ids_dtype=int64` fed by the same
  fast tokenizer as the ONNX Runtime peers: the two graphs alone, side by side;
- "bert_tf onnx sentence": `tools/export_onnx.py --text_input` of the sentence-transformers
  folder (`--hf_dir`): strings in, its pooling and Normalize inside, one `session.run`; its
  peer "onnxruntime sentence" is the optimized graph below with the fast tokenizer before it
  and mean pooling and normalization in numpy after it, as users serve embeddings;
- "bert_tf padded": the same Keras encoder and preprocessor with `packed_inference=False`
  (every token of the request's longest computed), for the gain in one table;
- "keras_hub": keras-hub's `BertTextClassifierPreprocessor` (fixed `seq_length`, its only
  mode) and `BertBackbone` in one `tf.function`;
- "hf_torch": Hugging Face transformers on PyTorch, fast tokenizer, padding to the longest;
- "onnxruntime", "onnxruntime optimized", "onnxruntime int8": the model as its users export it
  from PyTorch (`torch.onnx.export(dynamo=False)` of transformers' `BertModel`), then after
  onnxruntime's transformer optimizer (fused attention, LayerNorm, GELU), then that optimized
  graph quantized by `quantize_dynamic` (int8 weights, as ORT's BERT guide does it); fast
  tokenizer, padding to the longest. (An earlier graph written by hand ran 2.1x slower than
  the export at batch 1: 13.9 against 6.6 ms, benchmarks/README.md; it is gone.)
The same ONNX pipeline exports a fine-tuned classifier (`onnx_graph(head="classifier")`), whose
accuracy `benchmarks/serving_tflite.py` scores beside the TFLite int8 one.
"""

import os
import sys

BERT_TF_ONNX = ("bert_tf onnx", "bert_tf onnx int8", "bert_tf onnx ids", "bert_tf onnx sentence")
SYSTEMS = ("bert_tf", "bert_tf bfloat16", "bert_tf padded", "bert_tf tflite",
           "bert_tf tflite int8", *BERT_TF_ONNX, "keras_hub", "hf_torch", "onnxruntime",
           "onnxruntime optimized", "onnxruntime int8", "onnxruntime sentence")
TF_SYSTEMS = ("bert_tf", "bert_tf bfloat16", "bert_tf padded", "bert_tf tflite",
              "bert_tf tflite int8", *BERT_TF_ONNX, "keras_hub")
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Per head of `onnx_graph`: the transformers class that loads the Hugging Face folder, the
# output the graph returns, and that output's dynamic axes.
ONNX_HEADS = {"encoder": ("AutoModel", "last_hidden_state", {0: "batch", 1: "sequence"}),
              "classifier": ("AutoModelForSequenceClassification", "logits", {0: "batch"})}


def build_system(name, model_dir, hf_dir, seq_length, work_dir, threads):
    """`serve(texts)` of system `name` (see the module docstring), on `threads` threads.

    Args:
      model_dir: the bert_tf model directory (TF systems).
      hf_dir: the Hugging Face folder it was converted from (PyTorch / ONNX systems).
    """
    if name in TF_SYSTEMS:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        if name in BERT_TF_ONNX:
            return _bert_tf_onnx(name, model_dir, hf_dir, seq_length, work_dir, threads)
        if name.startswith("bert_tf tflite"):
            return _bert_tf_tflite(model_dir, seq_length, work_dir, threads,
                                   "dynamic_int8" if name.endswith("int8") else "none")
        builder = {"bert_tf": _bert_tf_export, "bert_tf padded": _bert_tf_padded,
                   "bert_tf bfloat16": _bert_tf_bfloat16, "keras_hub": _keras_hub}[name]
        return builder(model_dir, seq_length, work_dir)
    if name == "hf_torch":
        return _hf_torch(hf_dir, seq_length, threads)
    if name == "onnxruntime sentence":
        return _onnxruntime_sentence(hf_dir, seq_length, work_dir, threads)
    if name.startswith("onnxruntime"):
        stage = name.removeprefix("onnxruntime").strip() or "exported"
        run = onnxruntime_runner(onnx_graph(hf_dir, work_dir, stage), hf_dir, seq_length,
                                 threads)
        return lambda texts: run(texts)[:, 0]
    raise ValueError(f"Unknown serving system {name!r}; choose from {SYSTEMS}.")


def _bert_tf_export(model_dir, seq_length, work_dir, dtype="float32"):
    import tensorflow as tf

    from bert_tf.export.exporter import export_saved_model

    path = export_saved_model(model_dir, os.path.join(work_dir, "bert_tf"), "encoder",
                              seq_length=seq_length, dtype=dtype)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    return lambda texts: serve(text=tf.constant(texts))["pooled_output"].numpy()


def _bert_tf_bfloat16(model_dir, seq_length, work_dir):
    return _bert_tf_export(model_dir, seq_length, work_dir, dtype="bfloat16")


def _bert_tf_tflite(model_dir, seq_length, work_dir, threads, quantization):
    import numpy as np

    from bert_tf.export.tflite import export_tflite, tflite_interpreter

    path = os.path.join(work_dir, f"encoder_{quantization}.tflite")
    if not os.path.exists(path):
        export_tflite(model_dir, path, "encoder", quantization=quantization,
                      seq_length=seq_length)
    runner = tflite_interpreter(model_path=path, num_threads=threads).get_signature_runner()
    return lambda texts: runner(text=np.array(texts, dtype=object))["pooled_output"]


def _bert_tf_onnx(name, model_dir, hf_dir, seq_length, work_dir, threads):
    import numpy as np
    import onnxruntime_extensions

    from bert_tf.export.onnx_export import export_onnx

    sentence, ids = name.endswith("sentence"), name.endswith("ids")
    folder = os.path.join(work_dir, name.replace(" ", "_"))
    if not os.path.exists(os.path.join(folder, "model.onnx")):
        export_onnx(hf_dir if sentence else model_dir, folder,
                    head="sentence_encoder" if sentence else "encoder", text_input=not ids,
                    quantize="int8" if name.endswith("int8") else "none",
                    ids_dtype="int64", seq_length=seq_length)
    if ids:
        run = onnxruntime_runner(os.path.join(folder, "model.onnx"), hf_dir, seq_length, threads,
                                 input_names=("input_word_ids", "input_mask", "input_type_ids"))
        return lambda texts: run(texts)[:, 0]
    options = _ort_options(threads)
    options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
    session = _ort_session(os.path.join(folder, "model.onnx"), options)
    output = ["embedding" if sentence else "pooled_output"]
    return lambda texts: session.run(output, {"text": np.array(texts, dtype=object)})[0]


def _bert_tf_padded(model_dir, seq_length, work_dir):
    import tensorflow as tf

    from bert_tf.checkpoints.model_dir import vocab_path
    from bert_tf.models.bert_encoder import BertEncoder
    from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

    encoder = BertEncoder.from_pretrained(model_dir, packed_inference=False)
    preprocessor = BertPreprocessor(vocab_path(model_dir), seq_length=seq_length,
                                    padding="longest")
    forward = tf.function(
        lambda texts: encoder(preprocessor(texts), training=False)["pooled_output"],
        input_signature=[tf.TensorSpec([None], tf.string)])
    return lambda texts: forward(tf.constant(texts)).numpy()


def _keras_hub(model_dir, seq_length, work_dir):
    import keras_hub
    import tensorflow as tf

    from benchmarks.keras_hub_peer import keras_hub_backbone
    from bert_tf.checkpoints.model_dir import read_config, vocab_path

    backbone = keras_hub_backbone(read_config(model_dir))
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=vocab_path(model_dir), lowercase=True),
        sequence_length=seq_length)
    forward = tf.function(
        lambda texts: backbone(preprocessor(texts), training=False)["pooled_output"],
        input_signature=[tf.TensorSpec([None], tf.string)])
    return lambda texts: forward(tf.constant(texts)).numpy()


def _hf_tokenizer(hf_dir, seq_length):
    try:
        from transformers import AutoTokenizer
    except ImportError:  # a .venv-ref without transformers: the same Rust tokenizer directly
        return _rust_tokenizer(hf_dir, seq_length)

    tokenizer = AutoTokenizer.from_pretrained(hf_dir)
    return lambda texts, kind: tokenizer(texts, padding=True, truncation=True,
                                         max_length=seq_length, return_tensors=kind)


def _rust_tokenizer(hf_dir, seq_length):
    """`tokenizers.Tokenizer` of tokenizer.json, padding to the longest: numpy inputs only."""
    import numpy as np
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(hf_dir, "tokenizer.json"))
    tokenizer.enable_truncation(max_length=seq_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def tokenize(texts, kind):
        if kind != "np":
            raise ValueError("Without transformers only numpy inputs are made.")
        encodings = tokenizer.encode_batch(texts)
        return {"input_ids": np.array([e.ids for e in encodings], np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], np.int64)}
    return tokenize


def _hf_torch(hf_dir, seq_length, threads):
    import torch
    from transformers import AutoModel

    torch.set_num_threads(threads)
    model = AutoModel.from_pretrained(hf_dir).eval()
    tokenize = _hf_tokenizer(hf_dir, seq_length)

    def serve(texts):
        with torch.inference_mode():
            return model(**tokenize(texts, "pt")).last_hidden_state[:, 0].numpy()
    return serve


def _ort_options(threads):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return options


def _ort_session(path, options):
    import onnxruntime

    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def onnxruntime_runner(path, hf_dir, seq_length, threads, with_mask=False,
                       input_names=ONNX_INPUTS):
    """`run(texts)`: the first output of the ONNX graph at `path` under ONNX Runtime on
    `threads` threads, the texts tokenized by `hf_dir`'s fast tokenizer (padded to the longest,
    truncated at `seq_length`) and fed as `input_names` (ids, mask, type ids); `with_mask`:
    `(output, attention_mask)`."""
    session = _ort_session(path, _ort_options(threads))
    tokenize = _hf_tokenizer(hf_dir, seq_length)

    def run(texts):
        inputs = tokenize(texts, "np")
        feed = {ours: inputs[name].astype("int64") for ours, name in zip(input_names, ONNX_INPUTS)}
        output = session.run(None, feed)[0]
        return (output, inputs["attention_mask"]) if with_mask else output
    return run


def _onnxruntime_sentence(hf_dir, seq_length, work_dir, threads):
    """Embeddings as users serve them from ONNX Runtime: the optimized graph's last hidden
    state, then masked mean pooling and L2 normalization in numpy."""
    import numpy as np

    run = onnxruntime_runner(onnx_graph(hf_dir, work_dir, "optimized"), hf_dir, seq_length,
                             threads, with_mask=True)

    def serve(texts):
        hidden, mask = run(texts)
        mask = mask[..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12)
    return serve


def onnx_graph(hf_dir, work_dir, stage, head="encoder"):
    """The path of `head`'s `stage` graph under `work_dir`, made (and its earlier stages) if
    missing.

    Args:
      head: a key of `ONNX_HEADS`: "encoder" (transformers' `BertModel`, last hidden state) or
        "classifier" (`BertForSequenceClassification`, logits).
      stage: "exported" (`torch.onnx.export`), "optimized" (onnxruntime's transformer
        optimizer) or "int8" (that optimized graph after `quantize_dynamic`).
    """
    import json

    path = os.path.join(work_dir, f"{head}_{stage}.onnx")
    if os.path.exists(path):
        return path
    if stage == "exported":
        import torch
        import transformers

        # Beside busy TensorFlow workers, torch's default of all cores stalled the export.
        torch.set_num_threads(1)
        auto_class, output, output_axes = ONNX_HEADS[head]
        model = getattr(transformers, auto_class).from_pretrained(hf_dir).eval()
        _export_onnx(model, path, output, output_axes)
    elif stage == "optimized":
        from onnxruntime.transformers import optimizer

        with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        model = optimizer.optimize_model(onnx_graph(hf_dir, work_dir, "exported", head),
                                         model_type="bert",
                                         num_heads=config["num_attention_heads"],
                                         hidden_size=config["hidden_size"])
        # Which fusions took (Attention, SkipLayerNormalization, BiasGelu...), for the log.
        print(json.dumps({"onnxruntime_fusions": model.get_fused_operator_statistics()}),
              file=sys.stderr, flush=True)
        model.save_model_to_file(path)
    elif stage == "int8":
        from onnx import TensorProto
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # The fused ops' outputs have no inferred type; they are float32 (ORT's own advice).
        quantize_dynamic(onnx_graph(hf_dir, work_dir, "optimized", head), path,
                         weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
    else:
        raise ValueError(f"Unknown ONNX graph stage {stage!r}.")
    return path


def _export_onnx(model, path, output, output_axes):
    """`torch.onnx.export` (TorchScript, as users export) of `model`'s `output` with dynamic
    batch and sequence axes on the inputs and `output_axes` on the output."""
    import torch

    class Output(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return getattr(self.model(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids), output)

    example = torch.ones([2, 8], dtype=torch.int64)
    dynamic = {0: "batch", 1: "sequence"}
    torch.onnx.export(Output(model), (example, example, example), path, dynamo=False,
                      input_names=list(ONNX_INPUTS), output_names=[output],
                      dynamic_axes={**{name: dynamic for name in ONNX_INPUTS},
                                    output: output_axes})
