"""One post-LN Transformer encoder block, as in BERT (paper §3, Vaswani et al. 2017)."""

import keras
import tensorflow as tf

from bert_tf.layers.activations import get_activation
from bert_tf.layers.attention import MultiHeadSelfAttention
from bert_tf.layers.dense import Dense
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.packing import gather_positions


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerBlock(keras.layers.Layer):
    """Self-attention and a feed-forward network, each followed by residual + LayerNorm.

    Args:
      hidden_size: H.
      num_heads: attention heads; `hidden_size` must divide evenly.
      intermediate_size: width of the feed-forward layer (4H in the paper).
      hidden_act: `hidden_act` name of the feed-forward activation.
      hidden_dropout_prob: dropout on each sub-layer's output.
      attention_probs_dropout_prob: dropout on attention probabilities.
      layer_norm_eps: LayerNorm epsilon.
      causal: causal self-attention (left-to-right ablation).
      initializer_range: stddev of the truncated normal initializer.

    `hidden_states` is `[B, S, H]`, or packed `[T, H]` real tokens with the batch's
    `packing` (no work on padding; see `MultiHeadSelfAttention`). With `output_positions`
    `[B, K]` the block computes its output only there (`[B, K, H]`, keys and values still
    from every position): a last block whose other outputs no loss reads (pretraining)
    skips most of its work. `attention_mask` (`attention.block_diagonal_mask`) goes to the
    attention: rows of several sequences.

    Example:
    >>> block = TransformerBlock(hidden_size=8, num_heads=2, intermediate_size=32)
    >>> block(tf.zeros([1, 3, 8]), tf.ones([1, 3], tf.int32)).shape
    TensorShape([1, 3, 8])
    """

    def __init__(self, hidden_size, num_heads, intermediate_size, hidden_act="gelu",
                 hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                 layer_norm_eps=1e-12, causal=False, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.layer_norm_eps = layer_norm_eps
        self.causal = causal
        self.initializer_range = initializer_range
        initializer = truncated_normal(initializer_range)
        self.attention = MultiHeadSelfAttention(
            num_heads, hidden_size // num_heads, dropout_rate=attention_probs_dropout_prob,
            causal=causal, initializer_range=initializer_range, name="attention")
        self.attention_dropout = Dropout(hidden_dropout_prob)
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_eps, dtype="float32", name="attention_layer_norm")
        self.intermediate = Dense(
            intermediate_size, activation=get_activation(hidden_act),
            kernel_initializer=initializer, name="intermediate")
        self.output_dense = Dense(
            hidden_size, kernel_initializer=initializer, name="output")
        self.output_dropout = Dropout(hidden_dropout_prob)
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_eps, dtype="float32", name="output_layer_norm")

    def build(self, input_shape):
        shape = (None, None, self.hidden_size)
        self.attention.build(shape)
        self.attention_layer_norm.build(shape)
        self.intermediate.build(shape)
        self.output_dense.build((None, None, self.intermediate_size))
        self.output_layer_norm.build(shape)
        self.built = True

    def call(self, hidden_states, input_mask, training=None, packing=None,
             output_positions=None, attention_mask=None):
        # Attend, then add the residual and normalize (post-LN).
        attended = self.attention(hidden_states, input_mask, training=training, packing=packing,
                                  output_positions=output_positions,
                                  attention_mask=attention_mask)
        if output_positions is not None:
            hidden_states = gather_positions(hidden_states, output_positions, packing)
        attended = self.attention_dropout(attended, training=training)
        hidden_states = self._add_and_normalize(self.attention_layer_norm, hidden_states, attended)
        # Position-wise feed-forward, residual, normalize.
        feed_forward = self.output_dense(self.intermediate(hidden_states))
        feed_forward = self.output_dropout(feed_forward, training=training)
        return self._add_and_normalize(self.output_layer_norm, hidden_states, feed_forward)

    def _add_and_normalize(self, layer_norm, residual, update):
        # Residual sum and LayerNorm in float32 under mixed precision; the result goes back
        # to the compute dtype for the next matmul.
        summed = tf.cast(residual, tf.float32) + tf.cast(update, tf.float32)
        return tf.cast(layer_norm(summed), self.compute_dtype)

    def compute_output_shape(self, hidden_states_shape, input_mask_shape=None,
                             output_positions_shape=None):
        return self.attention.compute_output_shape(hidden_states_shape, input_mask_shape,
                                                   output_positions_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            num_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            hidden_act=self.hidden_act,
            hidden_dropout_prob=self.hidden_dropout_prob,
            attention_probs_dropout_prob=self.attention_probs_dropout_prob,
            layer_norm_eps=self.layer_norm_eps,
            causal=self.causal,
            initializer_range=self.initializer_range,
        )
        return config
