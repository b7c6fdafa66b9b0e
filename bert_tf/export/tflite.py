"""TFLite export taking raw strings: tf-text's FastBertTokenizer in the graph, float32 or int8.

The `.tflite` file has one signature, `serving_default`, that takes `text` (string `[batch]`)
and returns the head's outputs (`encoder`: `pooled_output [B, H]`, `sequence_output
[B, W, H]`, `input_mask [B, W]`; `classifier`: `logits`, `probabilities [B, C]`, `label`
string `[B]`), W the batch's longest packed sequence, at most `seq_length`.

Everything but tokenization is a TFLite builtin op; the tokenizer is tf-text's
`FastBertTokenizer` (custom ops `FastBertNormalize`, `FastWordpieceTokenizeWithOffsets`), so
an interpreter needs tf-text's op registerer:

    import tensorflow_text
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps
    interpreter = InterpreterWithCustomOps(
        model_path="model.tflite",
        custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS)
    outputs = interpreter.get_signature_runner()(text=np.array([b"Hello world"]))

Why FastBertTokenizer and not `BertPreprocessor`'s tokenizer: ours gets the reference's ids
with RE2/ICU ops (regex_replace, NormalizeUTF8, ...) that TFLite has no kernels for (they would
need the Flex delegate). FastBertTokenizer gives the same ids on ordinary text; it differs on
control characters, U+FFFD, soft hyphens and special tokens typed in the text ("[CLS]" becomes
"[", "cls", "]"): 30 of the 2,371 uncased and 21 of the 1,000 cased reference fixture lines,
all of them such edge cases (docs/design.md, "TFLite").

The encoder runs padded (`packed_inference=False`): one request is one sequence on a device,
with nothing to pack, and packing's bookkeeping ops (sorting, scatter, per-group conds) would
cost more than they save there.

Example:
>>> export_tflite("/tmp/minilm", "/tmp/minilm.tflite", head="encoder")  # doctest: +SKIP
"""

import os
import shutil
import tempfile
import warnings

import tensorflow as tf
import tensorflow_text as tf_text
from absl import logging

from bert_tf.export.exporter import export_seq_length
from bert_tf.export.options import TFLITE_QUANTIZATIONS
from bert_tf.export.restored_model import restore_model
from bert_tf.export.serving_module import ExportError, captured_variables
from bert_tf.tokenization import normalization
from bert_tf.tokenization import vocab as vocab_lib

TFLITE_HEADS = ("encoder", "classifier")
QUANTIZATIONS = TFLITE_QUANTIZATIONS
# TFLite builtin GELU kernels for the config's `hidden_act` (our `gelu` is a custom-gradient
# erf expression, whose Erf op TFLite lacks; tf.nn.gelu converts to the builtin GELU op).
_TFLITE_ACTIVATIONS = {
    "gelu": lambda x: tf.nn.gelu(x, approximate=False),
    "gelu_new": lambda x: tf.nn.gelu(x, approximate=True),
    "gelu_approximate": lambda x: tf.nn.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: tf.nn.gelu(x, approximate=True),
}
_SIGNATURE = "serving_default"


def tflite_interpreter(model_path=None, model_content=None, num_threads=None):
    """A Python TFLite interpreter with tf-text's ops registered (what the export needs)."""
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps

    with warnings.catch_warnings():
        # "tf.lite.Interpreter is deprecated": it is still TF 2.21's, and tf-text's
        # registerer is built against it (docs/design.md, "TFLite").
        warnings.simplefilter("ignore", UserWarning)
        return InterpreterWithCustomOps(
            model_path=model_path, model_content=model_content, num_threads=num_threads,
            custom_op_registerers=tf_text.tflite_registrar.SELECT_TFTEXT_OPS)


def model_ops(tflite_bytes):
    """The sorted op names of a `.tflite` model (builtins by name, custom ops by their code)."""
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model_from_bytearray(bytearray(tflite_bytes))
    builtin_names = {value: name for name, value in vars(schema.BuiltinOperator).items()
                     if not name.startswith("_")}
    return sorted({code.customCode.decode() if code.customCode else
                   builtin_names[max(code.builtinCode, code.deprecatedBuiltinCode)]
                   for code in model.operatorCodes})


class TfliteModule(tf.Module):
    """Strings in, the head's outputs out, in ops that TFLite has (see the module docstring).

    Args:
      restored: a `RestoredModel` of a head in `TFLITE_HEADS` (its encoder is switched to the
        padded layout and its GELU to TFLite's builtin; use a model restored for this).
      seq_length: the longest packed sequence; longer text is truncated.
    """

    def __init__(self, restored, seq_length):
        super().__init__(name=f"bert_{restored.head}_tflite")
        if restored.head not in TFLITE_HEADS:
            raise ExportError(f"--head={restored.head} has no TFLite export; choose one of "
                              f"{', '.join(TFLITE_HEADS)}.")
        encoder = restored.encoder
        encoder.packed_inference = False
        activation = _TFLITE_ACTIVATIONS.get(encoder.config.hidden_act)
        if activation is not None:
            for block in encoder.blocks:
                block.intermediate.activation = activation
        vocab = vocab_lib.load_vocab(restored.vocab_file)
        ids = vocab_lib.special_token_ids(vocab)
        self._cls_id, self._sep_id = ids.cls_id, ids.sep_id
        # max_bytes_per_word: the reference's limit is 100 characters, i.e. 100 bytes of ASCII.
        self.tokenizer = tf_text.FastBertTokenizer(
            vocab=vocab, suffix_indicator="##", token_out_type=tf.int32,
            unknown_token=vocab_lib.UNK, lower_case_nfd_strip_accents=restored.lower_case,
            max_bytes_per_word=normalization.MAX_CHARS_PER_WORD)
        self._model = restored.model  # a Python attribute: its tf.Variables are saved below
        self.head = restored.head
        self.seq_length = seq_length
        self.label_names = restored.label_names

    def pack(self, text):
        """`[CLS] pieces [SEP]` of each string, padded to the longest: the encoder inputs.

        Builtin ops only (a scatter into the dense batch, not RaggedTensorToTensor)."""
        pieces = self.tokenizer.tokenize(text)  # int32 ragged [B, (pieces)]
        rows = pieces.value_rowids()
        column = (tf.range(tf.shape(pieces.flat_values, out_type=tf.int64)[0])
                  - tf.gather(pieces.row_starts(), rows))
        lengths = tf.minimum(pieces.row_lengths(), self.seq_length - 2)  # [B]
        keep = column < tf.gather(lengths, rows)
        width = tf.reduce_max(tf.concat([lengths, tf.zeros([1], lengths.dtype)], axis=0)) + 2
        batch = tf.shape(text, out_type=tf.int64)[0]
        positions = tf.stack([tf.boolean_mask(rows, keep), tf.boolean_mask(column, keep) + 1], 1)
        word_ids = tf.scatter_nd(positions, tf.boolean_mask(pieces.flat_values, keep),
                                 tf.stack([batch, width]))
        position = tf.range(width)[tf.newaxis]
        last = lengths[:, tf.newaxis] + 1
        word_ids = tf.where(position == 0, self._cls_id,
                            tf.where(position == last, self._sep_id, word_ids))
        mask = tf.cast(position <= last, tf.int32)
        return {"input_word_ids": word_ids, "input_mask": mask,
                "input_type_ids": tf.zeros_like(mask)}

    def outputs(self, text):
        inputs = self.pack(text)
        if self.head == "encoder":
            outputs = self._model(inputs, training=False)
            return {"pooled_output": outputs["pooled_output"],
                    "sequence_output": outputs["sequence_output"],
                    "input_mask": inputs["input_mask"]}
        logits = self._model(inputs, training=False)
        if len(self.label_names) == 1:  # A regressor: the logit is the prediction.
            return {"logits": logits}
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1),
                "label": tf.gather(tf.constant(self.label_names),
                                   tf.argmax(logits, axis=-1, output_type=tf.int32))}

    def signatures(self):
        function = tf.function(self.outputs, autograph=False).get_concrete_function(
            tf.TensorSpec([None], tf.string, name="text"))
        self.model_variables = captured_variables([function])
        return {_SIGNATURE: function}


def convert(module, quantization="none"):
    """Converts a `TfliteModule` to `.tflite` bytes (through a temporary SavedModel)."""
    if quantization not in QUANTIZATIONS:
        raise ExportError(f"quantization must be one of {', '.join(QUANTIZATIONS)}; "
                          f"received {quantization!r}.")
    folder = tempfile.mkdtemp(prefix="bert_tf_tflite_")
    try:
        tf.saved_model.save(module, folder, signatures=module.signatures())
        converter = tf.lite.TFLiteConverter.from_saved_model(folder, signature_keys=[_SIGNATURE])
        # Builtins first; SELECT_TF_OPS only as a fallback (checked below: none is used).
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS,
                                               tf.lite.OpsSet.SELECT_TF_OPS]
        converter.allow_custom_ops = True  # tf-text's tokenizer ops
        if quantization == "dynamic_int8":
            # Dynamic range: int8 weights, activations quantized on the fly per batch.
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        return converter.convert()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def export_tflite(model_dir, output, head, quantization="none", seq_length=None):
    """Writes a `.tflite` model of `head` from `model_dir` that takes raw strings.

    Args:
      model_dir: a model directory (`write_model_dir`).
      output: the `.tflite` file to write (not overwritten if it exists).
      head: one of `TFLITE_HEADS`.
      quantization: "none" (float32) or "dynamic_int8" (int8 weights, dynamic-range kernels).
      seq_length: the longest packed sequence; default `max_seq_length` of model_info.json,
        else 128.

    Returns:
      The sorted op names of the written model.

    Raises:
      ExportError: an unsupported head or quantization, `output` exists, or the model needs
        TensorFlow (Flex) ops.
      FileNotFoundError, CheckpointError: the model directory lacks its vocab, config,
        checkpoint or the head.
    """
    if head not in TFLITE_HEADS:
        raise ExportError(f"--head={head} has no TFLite export; choose one of "
                          f"{', '.join(TFLITE_HEADS)} (export_saved_model.py exports the "
                          "others for TF Serving).")
    if quantization not in QUANTIZATIONS:
        raise ExportError(f"--quantization must be one of {', '.join(QUANTIZATIONS)}; "
                          f"received {quantization!r}.")
    if os.path.exists(output):
        raise ExportError(f"{output} already exists; nothing was overwritten. Pass a new "
                          "--output or remove the file.")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise ExportError(f"The folder of --output={output} does not exist: {parent}.")
    restored = restore_model(model_dir, head)  # first: a missing file is the first thing to say
    module = TfliteModule(restored, export_seq_length(model_dir, head, seq_length))
    data = convert(module, quantization)
    ops = model_ops(data)
    flex = [op for op in ops if op.startswith("Flex")]
    if flex:  # A model change that brings back a TF-only op: fail here, not on a phone.
        raise ExportError(f"The TFLite model of {model_dir} needs TensorFlow ops that TFLite "
                          f"lacks ({', '.join(flex)}); nothing was written.")
    staging = f"{output}.tmp-{os.getpid()}"
    with open(staging, "wb") as f:
        f.write(data)
    os.replace(staging, output)
    logging.info("Wrote %s (--head=%s, --quantization=%s, %.1f MB, %d op types).", output,
                 head, quantization, len(data) / 1e6, len(ops))
    return ops
