"""The tf.Module behind an export: in-graph preprocessing, the model, two signatures.

`serving_default` takes raw strings (`text`, or `text_a` + `text_b` for pair inputs) and
tokenizes and packs them in-graph with `BertPreprocessor`; `serve_tokenized` takes the int32
encoder inputs `input_word_ids`, `input_mask`, `input_type_ids` for clients that tokenize
themselves. Subclasses (one per head) turn model outputs into named serving outputs.

Padding: by default (`padding="longest"`) `serving_default` packs each request to its own
longest sequence, rounded up to a multiple of 8 and at most `seq_length`: a request of short
sentences costs a fraction of a `seq_length`-wide one. Sequence-shaped outputs
(`sequence_output`, token `logits`, `start_logits`, `input_mask`) are then `[B, W, ...]` with
W that width; their values at real positions are those of `padding="fixed"` (W = seq_length).
With TF Serving's server-side batching (`--enable_batching`), the server concatenates the
string inputs of several requests along the batch axis, runs the batch once (packed to the
longest sentence among all of them) and splits every output along the batch axis again: each
reply then has the batch's W, which is at least its own, and the same values at its real
positions. Inputs are `[B]` strings, so requests always batch together (no
`pad_variable_length_inputs` needed).
"""

import functools
import types

import tensorflow as tf

from bert_tf.errors import UserError
from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.tokenization.vocab import load_vocab

SINGLE_TEXT = ("text",)
PAIR_TEXT = ("text_a", "text_b")
# "buckets" is left out: TF Serving runs the graph without XLA, so any width compiles nothing.
SERVING_PADDINGS = ("longest", "fixed")


def captured_variables(functions, trainable=False):
    """The distinct tf.Variables that `functions` (concrete functions) read."""
    variables = {}
    for function in functions:
        for variable in function.trainable_variables if trainable else function.variables:
            variables.setdefault(id(variable), variable)
    return list(variables.values())


def float32_outputs(outputs):
    """Floating outputs as float32: a bfloat16 export keeps float32 signatures for clients."""
    return {name: tf.cast(value, tf.float32) if value.dtype.is_floating else value
            for name, value in outputs.items()}


class ExportError(UserError, ValueError):
    """An export asked for something the model directory or the serving graph cannot give."""


class BertServingModule(tf.Module):
    """Base serving module: preprocessing + model + vocab asset.

    Args:
      restored: a `RestoredModel` from `restore_model`.
      seq_length: the longest packed sequence of `serving_default` (longer input is truncated).
      text_pair: take `text_a` + `text_b` instead of `text`.
      padding: "longest" (each request to its own longest sequence) or "fixed" (`seq_length`).
    """

    # Rank of each tokenized input: [B, S]; multiple choice overrides with [B, C, S].
    tokenized_rank = 2

    def __init__(self, restored, seq_length=128, text_pair=False, padding="longest"):
        super().__init__(name=f"bert_{restored.head}")
        if padding not in SERVING_PADDINGS:
            raise ExportError(f"padding must be one of {SERVING_PADDINGS}; received {padding!r}.")
        max_length = restored.encoder.config.max_position_embeddings
        if not 2 < seq_length <= max_length:
            raise ExportError(f"seq_length must be in 3..{max_length} (the model's "
                             f"max_position_embeddings); received {seq_length}.")
        # Held untracked: SavedModel would save each Keras variable twice (its wrapper and its
        # tf.Variable). `signatures()` tracks the tf.Variables the functions read instead.
        # serve_tokenized (set by `signatures()`) is saved as a signature, not as an attribute.
        self._untracked = types.SimpleNamespace(model=restored.model, encoder=restored.encoder,
                                                serve_tokenized=None)
        self.preprocessor = BertPreprocessor(
            restored.vocab_file, lower_case=restored.lower_case, seq_length=seq_length,
            padding=padding)
        # The vocab travels with the SavedModel (assets/vocab.txt) and survives a re-save.
        self.vocab_file = tf.saved_model.Asset(restored.vocab_file)
        self.text_inputs = PAIR_TEXT if text_pair else SINGLE_TEXT
        self.label_names = restored.label_names
        self.seq_length = seq_length

    @property
    def model(self):
        """The Keras model (not saved as an object; its variables are)."""
        return self._untracked.model

    def pack(self, texts):
        """Packs a dict of string tensors `[B]` into the encoder inputs `[B, W]`."""
        if self.text_inputs == SINGLE_TEXT:
            return self.preprocessor(texts["text"])
        return self.preprocessor((texts["text_a"], texts["text_b"]))

    def tokenized_outputs(self, inputs):
        """Serving outputs from the encoder inputs; every head defines this."""
        raise NotImplementedError

    def served_tokenized(self, inputs):
        """`tokenized_outputs(inputs)` through `serve_tokenized`'s traced function.

        `text_outputs` calls it while `signatures()` traces `serving_default`, so the model is
        traced once per export and both signatures share its graph (tracing MiniLM's packed
        encoder takes ~4 s; the text signature traced it a second time before).
        """
        return self._untracked.serve_tokenized(**{name: inputs[name] for name in ENCODER_INPUTS})

    def text_outputs(self, texts):
        """Serving outputs from raw strings; heads with text outputs extend this."""
        return self.served_tokenized(self.pack(texts))

    def text_specs(self):
        return {name: tf.TensorSpec([None], tf.string, name=name) for name in self.text_inputs}

    def signatures(self):
        """The `{name: concrete function}` dict to pass to `tf.saved_model.save`."""
        def serving_default(**texts):
            return float32_outputs(self.text_outputs(texts))

        def serve_tokenized(**inputs):
            return float32_outputs(self.tokenized_outputs(inputs))

        tokenized_specs = {name: tf.TensorSpec([None] * self.tokenized_rank, tf.int32, name=name)
                           for name in ENCODER_INPUTS}
        # No autograph: nothing branches on tensor values, and tracing is faster without it.
        trace = functools.partial(tf.function, autograph=False)
        # A lone request (batch of one) runs padded, without packing's bookkeeping: the
        # single-request setting, on while the signatures trace.
        with self._untracked.encoder.serving_batch_of_one():
            # serve_tokenized first: serving_default calls it (`served_tokenized`).
            tokenized = trace(serve_tokenized).get_concrete_function(**tokenized_specs)
            self._untracked.serve_tokenized = tokenized
            signatures = {
                "serving_default": trace(serving_default).get_concrete_function(
                    **self.text_specs()),
                "serve_tokenized": tokenized,
            }
            self._positional_text_call(serving_default, trace)
        # Tracked as plain tf.Variables, so TF1-style loaders (TF Serving's C++ loader,
        # `saved_model_cli run`) restore exactly what the functions read.
        self.serving_variables = captured_variables(signatures.values())
        return signatures

    def _positional_text_call(self, serving_default, trace):
        """`serving_default` on one positional argument, as `serve`, `serving_default` and
        `__call__`: a reloaded export is then called as tensorflow.org's tutorials call one,
        `reloaded(tf.constant(texts))`, and `keras.layers.TFSMLayer` runs it by either
        endpoint name (a signature takes keywords only). The argument is the `[B]` strings,
        or a tuple `(text_a, text_b)` for pair inputs."""
        names = list(self.text_specs())
        specs = [tf.TensorSpec(spec.shape, spec.dtype) for spec in self.text_specs().values()]

        def serve(texts):
            return serving_default(**dict(zip(names, tf.nest.flatten(texts))))

        serve = trace(serve, input_signature=[specs[0] if len(specs) == 1 else tuple(specs)])
        serve.get_concrete_function()
        self.serve = self.serving_default = self.__call__ = serve


class EncoderServing(BertServingModule):
    """Encoder outputs: `pooled_output [B, H]`, `sequence_output [B, S, H]`, `input_mask`."""

    def tokenized_outputs(self, inputs):
        outputs = self.model(inputs, training=False)
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
                "input_mask": inputs["input_mask"]}


class ClassifierServing(BertServingModule):
    """`logits` and `probabilities [B, C]`, `label` (string `[B]`, from the label names)."""

    def tokenized_outputs(self, inputs):
        logits = tf.cast(self.model(inputs, training=False), tf.float32)  # bf16 exports too
        if len(self.label_names) == 1:  # A regressor: the logit is the prediction.
            return {"logits": logits}
        return {"logits": logits,
                "probabilities": tf.nn.softmax(logits, axis=-1),
                "label": tf.gather(tf.constant(self.label_names), tf.argmax(logits, axis=-1))}


class PretrainerServing(BertServingModule):
    """Fills in the `[MASK]` tokens of the input and scores next-sentence prediction.

    Outputs: `masked_lm_positions` int32 `[B, P]` (positions of [MASK] in the packed input, P the
    most masks of any example, padded with 0), `masked_lm_weights` float32 `[B, P]` (1 at real
    positions), `masked_lm_ids` int32 `[B, P]` and `masked_lm_tokens` string `[B, P]` (the
    predicted token, "" at padding), and with an NSP head `nsp_probabilities [B, 2]`
    (index 0: text_b follows text_a, as in google-research `next_sentence_labels`).
    """

    def __init__(self, restored, seq_length=128, text_pair=True, padding="longest"):
        super().__init__(restored, seq_length, text_pair, padding)
        self.vocab_tokens = load_vocab(restored.vocab_file)

    def tokenized_outputs(self, inputs):
        word_ids = inputs["input_word_ids"]
        is_mask = tf.equal(word_ids, self.preprocessor.tokenizer.mask_id)
        positions = tf.broadcast_to(tf.range(tf.shape(word_ids)[1]), tf.shape(word_ids))
        positions = tf.ragged.boolean_mask(positions, is_mask)
        weights = tf.ones_like(positions, tf.float32).to_tensor()
        positions = positions.to_tensor()
        outputs = self.model(dict(inputs, masked_lm_positions=positions), training=False)
        predicted = tf.argmax(outputs["mlm_logits"], axis=-1, output_type=tf.int32)
        tokens = tf.gather(tf.constant(self.vocab_tokens), predicted)
        serving = {
            "masked_lm_positions": positions,
            "masked_lm_weights": weights,
            "masked_lm_ids": predicted,
            "masked_lm_tokens": tf.where(weights > 0, tokens, ""),
        }
        if "nsp_logits" in outputs:
            serving["nsp_probabilities"] = tf.nn.softmax(outputs["nsp_logits"], axis=-1)
        return serving
