"""The masked-LM head: transform, then logits against the tied word embeddings."""

import keras
import tensorflow as tf

from bert_tf.layers.activations import get_activation
from bert_tf.layers.dense import Dense
from bert_tf.layers.embeddings import RowReadEmbedding
from bert_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMHead(keras.layers.Layer):
    """Predicts the original WordPiece at each masked position (paper §3.1, Task #1).

    Dense(H) + activation + LayerNorm, then a matmul with the word-embedding table (tied
    output weights) plus a per-token output bias: google-research's `cls/predictions`.
    Logits are computed only at the gathered positions, never for all S tokens.

    Args:
      embedding_layer: the encoder's word `keras.layers.Embedding`; its table is reused.
      hidden_act: activation of the transform.
      layer_norm_eps: LayerNorm epsilon.
      initializer_range: stddev of the truncated normal initializer.

    Example:
    >>> words = keras.layers.Embedding(100, 8); words.build((None,))
    >>> head = MaskedLMHead(words)
    >>> head(tf.zeros([2, 5, 8]), tf.constant([[1, 2], [0, 4]])).shape
    TensorShape([2, 2, 100])
    """

    def __init__(self, embedding_layer, hidden_act="gelu", layer_norm_eps=1e-12,
                 initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.embedding_layer = embedding_layer
        if isinstance(embedding_layer, RowReadEmbedding):
            embedding_layer.reads_rows = False  # the decoder reads the table whole
        self.hidden_act = hidden_act
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range
        self.transform = Dense(
            embedding_layer.output_dim, activation=get_activation(hidden_act),
            kernel_initializer=truncated_normal(initializer_range), name="transform")
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_eps, dtype="float32", name="layer_norm")

    def build(self, input_shape=None):
        hidden_size = self.embedding_layer.output_dim
        self.transform.build((None, None, hidden_size))
        self.layer_norm.build((None, None, hidden_size))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.embedding_layer.input_dim,), initializer="zeros")
        self.built = True

    def call(self, sequence_output, masked_lm_positions=None):
        """Returns float32 logits `[B, P, V]` at `masked_lm_positions` `[B, P]`; None means
        `sequence_output` holds those positions' states already (`[B, P, H]`)."""
        gathered = sequence_output
        if masked_lm_positions is not None:
            gathered = tf.gather(sequence_output, masked_lm_positions, batch_dims=1)  # [B, P, H]
        hidden = self.layer_norm(self.transform(gathered))
        # One [B·P, H] x [H, V] matmul: a batched [B, P, H] x [V, H]ᵀ broadcast would give
        # the table a [B, V, H] gradient summed over B, which costs more than the matmul.
        hidden = tf.reshape(tf.cast(hidden, self.compute_dtype), [-1, tf.shape(hidden)[-1]])
        table = tf.cast(self.embedding_layer.embeddings, self.compute_dtype)  # [V, H]
        logits = tf.matmul(hidden, table, transpose_b=True)  # [B·P, V]
        logits = tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)
        return tf.reshape(logits, tf.concat([tf.shape(gathered)[:2], [-1]], 0))

    def compute_output_shape(self, sequence_output_shape, masked_lm_positions_shape):
        return tuple(masked_lm_positions_shape) + (self.embedding_layer.input_dim,)

    def compute_output_spec(self, sequence_output, masked_lm_positions):
        # Float32, as `call` returns; Keras's default spec would say the compute dtype.
        shape = self.compute_output_shape(sequence_output.shape, masked_lm_positions.shape)
        return keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        # The embedding layer is shared with the encoder; a task model that holds both
        # rebuilds the head from the encoder it deserializes (see BertPretrainer).
        config = super().get_config()
        config.update(
            hidden_act=self.hidden_act,
            layer_norm_eps=self.layer_norm_eps,
            initializer_range=self.initializer_range,
        )
        return config
