"""FrozenBertFeatures: contextual token features from a frozen encoder (paper §5.3).

The feature-based approach: BERT's weights stay fixed and a downstream model reads a mix of
its hidden layers; the paper's best NER mix concatenates the last four (96.1 dev F1).
"""

import keras
import tensorflow as tf

from bert_tf.models.task_model import check_encoder

COMBINES = ("concat", "sum")


@keras.saving.register_keras_serializable(package="bert_tf")
class FrozenBertFeatures(keras.layers.Layer):
    """Concatenation or sum of chosen encoder layers, with the encoder not trained.

    Args:
      encoder: a `BertEncoder` (e.g. `BertEncoder.from_pretrained(model_dir)`); it is set
        `trainable = False` and always run in inference mode (no dropout).
      layers: indices into the encoder's transformer-layer outputs; -1 is the last layer
        (google-research `extract_features.py` numbering).
      combine: "concat" → `[B, S, H·len(layers)]`, "sum" → `[B, S, H]`.

    Example:
    >>> features = FrozenBertFeatures(BertEncoder.from_pretrained(model_dir))  # doctest: +SKIP
    >>> features(preprocessor(tf.constant(["Hello world"]))).shape  # doctest: +SKIP
    TensorShape([1, 128, 1536])
    """

    def __init__(self, encoder, layers=(-1, -2, -3, -4), combine="concat", **kwargs):
        super().__init__(**kwargs)
        check_encoder(encoder)
        num_layers = encoder.config.num_hidden_layers
        layers = tuple(int(i) for i in layers)
        bad = [i for i in layers if not -num_layers <= i < num_layers]
        if not layers or bad:
            raise ValueError(f"`layers` must be non-empty indices in [-{num_layers}, "
                             f"{num_layers - 1}] for this {num_layers}-layer encoder; "
                             f"received {list(layers)}.")
        if combine not in COMBINES:
            raise ValueError(f"`combine` must be one of {COMBINES}; received {combine!r}.")
        encoder.trainable = False
        self.encoder = encoder
        self.layers = layers
        self.combine = combine

    def call(self, inputs):
        hidden = self.encoder(inputs, training=False)["encoder_outputs"]
        selected = [hidden[i] for i in self.layers]
        if self.combine == "sum":
            return tf.add_n(selected)
        return tf.concat(selected, axis=-1)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape["input_word_ids"])
        width = self.encoder.config.hidden_size
        return shape + (width * (len(self.layers) if self.combine == "concat" else 1),)

    def get_config(self):
        config = super().get_config()
        config.update(encoder=keras.saving.serialize_keras_object(self.encoder),
                      layers=list(self.layers), combine=self.combine)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
