"""SavedModels with TF Hub's BERT interfaces: a preprocessor and a reusable encoder.

Users of `hub.KerasLayer` / `keras.layers.TFSMLayer` swap these in for TF Hub's
`bert_*_preprocess` and `bert_*` models:

    preprocess = tf.saved_model.load(preprocessor_path)  # needs `import tensorflow_text`
    inputs = preprocess(tf.constant(["hello world"]))     # seq_length 128
    tokens = [preprocess.tokenize(a), preprocess.tokenize(b)]
    inputs = preprocess.bert_pack_inputs(tokens, seq_length=64)
    encoder = tf.saved_model.load(encoder_path)
    outputs = encoder(inputs)  # pooled_output, sequence_output, encoder_outputs (list)
    logits = encoder.mlm(dict(inputs, masked_lm_positions=positions))["mlm_logits"]
    # Keras: keras.layers.TFSMLayer(encoder_path)(keras.layers.TFSMLayer(preprocessor_path)(text))
"""

import types

import keras
import tensorflow as tf

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.tf_hub import saved_model_variables
from bert_tf.export.serving_module import captured_variables
from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

_STRINGS = tf.TensorSpec([None], tf.string)
_WORDS = tf.RaggedTensorSpec([None, None, None], tf.int32, ragged_rank=2)
# bert_pack_inputs is traced for these segment counts (TF Hub's preprocessors take 1 or 2) and
# sequence lengths (plus the default): BertPreprocessor takes seq_length as a Python int only.
_SEGMENT_COUNTS = (1, 2)
_PACK_SEQ_LENGTHS = (128, 512)


def _encoder_input_specs(*extra):
    return {name: tf.TensorSpec([None, None], tf.int32, name=name)
            for name in ENCODER_INPUTS + extra}


class _Tokenize(tf.Module):
    """`preprocessor.tokenize(strings)` plus TF Hub's `.get_special_tokens_dict()`."""

    def __init__(self, tokenizer):
        super().__init__()
        self._tokenizer = tokenizer

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, strings):
        return self._tokenizer.tokenize(strings)

    @tf.function(input_signature=[], autograph=False)
    def get_special_tokens_dict(self):
        t = self._tokenizer
        return {"vocab_size": tf.constant(t.vocab_size), "padding_id": tf.constant(t.pad_id),
                "start_of_sequence_id": tf.constant(t.cls_id),
                "end_of_segment_id": tf.constant(t.sep_id), "mask_id": tf.constant(t.mask_id)}


class PreprocessorModule(tf.Module):
    """TF Hub `bert_*_preprocess` interface over `BertPreprocessor`.

    Callable on a string batch; `.tokenize(strings)` → ragged `[B, (words), (pieces)]`;
    `.tokenize_with_offsets(strings)`; `.bert_pack_inputs(segments, seq_length=)` with one or
    two segments from `.tokenize` and `seq_length` the default, 128 or 512; `.serve(strings)`
    (the default endpoint of `keras.layers.TFSMLayer`) and the `serving_default` signature
    (`text`, for TF Serving) pack one segment.

    Args:
      vocab_file: the WordPiece vocab (saved as an asset).
      lower_case: whether the tokenizer lower-cases.
      seq_length: the default packed length.

    Example:
    >>> module = PreprocessorModule(vocab_file, seq_length=128)  # doctest: +SKIP
    >>> tf.saved_model.save(module, path, signatures=module.signatures())  # doctest: +SKIP
    """

    def __init__(self, vocab_file, lower_case=True, seq_length=128):
        super().__init__(name="bert_preprocess")
        self._preprocessor = BertPreprocessor(vocab_file, lower_case=lower_case,
                                              seq_length=seq_length)
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self.tokenize = _Tokenize(self._preprocessor.tokenizer)
        self.seq_length = seq_length
        tokenizer = self._preprocessor.tokenizer
        self.tokenize_with_offsets = tf.function(tokenizer.tokenize_with_offsets,
                                                 input_signature=[_STRINGS], autograph=False)
        self.bert_pack_inputs = tf.function(self._pack, autograph=False)
        for count in _SEGMENT_COUNTS:
            # None: the default seq_length.
            for length in (None, *sorted({seq_length, *_PACK_SEQ_LENGTHS})):
                self.bert_pack_inputs.get_concrete_function([_WORDS] * count, seq_length=length)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, strings):
        return self._preprocessor(strings)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def serve(self, strings):
        """`keras.layers.TFSMLayer`'s default endpoint: strings → encoder inputs."""
        return self._preprocessor(strings)

    serving_default = serve  # for `call_endpoint="serving_default"` (HubEncoderModule's note)

    def _pack(self, segments, seq_length=None):
        return self._preprocessor.bert_pack_inputs(list(segments), seq_length=seq_length)

    def signatures(self):
        def serving_default(text):
            return self._preprocessor(text)
        return {"serving_default": tf.function(serving_default, autograph=False)
                .get_concrete_function(tf.TensorSpec([None], tf.string, name="text"))}


class _ModelGardenWeights:
    """The encoder's (and masked-LM head's) weights as tf.Variables named and shaped as Model
    Garden's TF Hub export holds them (`tf_hub.saved_model_variables`), so TF Hub readers, bert_tf's
    own included, read the SavedModel like TF Hub's BERTs; `scope(training, heads)` makes the
    Keras layers compute with them.

    Args:
      encoder: a `BertEncoder`.
      masked_lm: its `MaskedLMHead`, or None.
    """

    def __init__(self, encoder, masked_lm=None):
        layers = [encoder] + ([masked_lm] if masked_lm is not None else [])
        weights = weight_map.model_weights(*layers)
        # (weight group, Keras weight, tf.Variable), the groups as `weight_map.expand` has them.
        self.pairs = [
            (target.split("/")[0], weights[target],
             tf.Variable(value, name=name, trainable=weights[target].trainable))
            for target, name, value in saved_model_variables(
                weights, encoder.config, ["masked_lm"] if masked_lm is not None else [])]
        # Dropout's seed states: fresh random seeds in training, as Model Garden's stateful
        # dropout, so the SavedModel holds no variable a TF Hub encoder lacks.
        self.seeds = [variable for layer in layers for variable in layer.variables
                      if variable.path not in weights]

    def scope(self, training, heads=()):
        """A `keras.StatelessScope` reading the encoder's weights (and those of `heads`) from
        the tf.Variables; a function traced in it captures those variables only."""
        mapping = [(weight, tf.reshape(variable, weight.shape))
                   for group, weight, variable in self.pairs
                   if group not in weight_map.HEAD_GROUPS or group in heads]
        if training:
            mapping += [(seed, tf.cast(tf.random.uniform(seed.shape, maxval=2 ** 31 - 1,
                                                         dtype=tf.int32), seed.dtype))
                        for seed in self.seeds]
        return keras.StatelessScope(state_mapping=mapping)


def _reusable_attributes(module, functions):
    """Sets TF Hub's reusable SavedModel attributes: the tf.Variables `functions` read."""
    module.variables = captured_variables(functions)
    module.trainable_variables = captured_variables(functions, trainable=True)
    module.regularization_losses = []


class HubMaskedLMModule(tf.Module):
    """The `.mlm` sub-object of a TF Hub BERT encoder, as Model Garden's `export_tfhub`
    (`with_mlm`) writes it: `__call__(inputs, training=False)` takes the encoder inputs plus
    int32 `masked_lm_positions` `[B, P]` and returns the encoder's outputs plus float32
    `mlm_logits` `[B, P, V]`.

    Example:
    >>> encoder = tf.saved_model.load(hub_encoder_path)                   # doctest: +SKIP
    >>> encoder.mlm(dict(inputs, masked_lm_positions=positions))["mlm_logits"]  # doctest: +SKIP
    """

    variables = trainable_variables = regularization_losses = None

    def __init__(self, encoder, masked_lm, weights):
        super().__init__(name="mlm")
        self._keras = types.SimpleNamespace(encoder=encoder, masked_lm=masked_lm,
                                            weights=weights)
        _reusable_attributes(self, [
            self.__call__.get_concrete_function(_encoder_input_specs("masked_lm_positions"),
                                                training=training)
            for training in (False, True)])

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        keras_layers = self._keras
        with keras_layers.weights.scope(training, heads=["masked_lm"]):
            outputs = keras_layers.encoder(
                {name: inputs[name] for name in ENCODER_INPUTS}, training=training)
            logits = keras_layers.masked_lm(outputs["sequence_output"],
                                            inputs["masked_lm_positions"])
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
                "encoder_outputs": list(outputs["encoder_outputs"]),
                "mlm_logits": logits}


class HubEncoderModule(tf.Module):
    """TF Hub BERT encoder interface (reusable SavedModel) over a `BertEncoder`.

    `__call__(inputs, training=False)` takes the dict of int32 `[B, S]` encoder inputs and
    returns `pooled_output`, `sequence_output` and the list `encoder_outputs`; `.serve(inputs)`
    (the default endpoint of `keras.layers.TFSMLayer`) and the `serving_default` signature
    (TF Serving) return the same with the list flattened to `encoder_outputs_0` ...
    `encoder_outputs_{L-1}`. As Model Garden's `export_tfhub` writes TF Hub's BERTs, the
    variables carry its names and shapes, `masked_lm` adds `.mlm` (`HubMaskedLMModule`), and
    `vocab_file` / `lower_case` become the `vocab_file` asset and `do_lower_case` variable.

    Args:
      encoder: a `BertEncoder`.
      masked_lm: its `MaskedLMHead`, or None.
      vocab_file: the WordPiece vocab, or None.
      lower_case: the model's casing, or None.
    """

    # The reusable SavedModel API that hub.KerasLayer reads: plain attributes, not properties.
    variables = trainable_variables = regularization_losses = None

    def __init__(self, encoder, masked_lm=None, vocab_file=None, lower_case=None):
        super().__init__(name="bert_encoder")
        weights = _ModelGardenWeights(encoder, masked_lm)
        # Untracked, with the functions' tf.Variables tracked instead (see
        # BertServingModule.__init__).
        self._keras = types.SimpleNamespace(encoder=encoder, weights=weights)
        _reusable_attributes(self, [
            self.__call__.get_concrete_function(_encoder_input_specs(), training=training)
            for training in (False, True)])
        if masked_lm is not None:
            self.mlm = HubMaskedLMModule(encoder, masked_lm, weights)
        if vocab_file is not None:
            self.vocab_file = tf.saved_model.Asset(vocab_file)
        if lower_case is not None:
            self.do_lower_case = tf.Variable(lower_case, trainable=False)

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        with self._keras.weights.scope(training):
            outputs = self._keras.encoder(inputs, training=training)
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
                "encoder_outputs": list(outputs["encoder_outputs"])}

    @tf.function(input_signature=[_encoder_input_specs()], autograph=False)
    def serve(self, inputs):
        """`keras.layers.TFSMLayer`'s default endpoint; outputs as in `serving_default`."""
        outputs = self.__call__(inputs)
        flat = {f"encoder_outputs_{i}": layer
                for i, layer in enumerate(outputs.pop("encoder_outputs"))}
        return dict(outputs, **flat)

    # `TFSMLayer(path, call_endpoint="serving_default")` finds this attribute before the
    # signature of that name, which takes keywords only (a layer passes its inputs by position).
    serving_default = serve

    def signatures(self):
        def serving_default(**inputs):
            return self.serve(inputs)
        return {"serving_default": tf.function(serving_default, autograph=False)
                .get_concrete_function(**_encoder_input_specs())}
