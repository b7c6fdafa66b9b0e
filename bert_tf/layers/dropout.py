"""Dropout with 16-bit noise applied as one multiply: Keras's layer, cheaper on CPUs."""

import keras
import tensorflow as tf

_LEVELS = 2 ** 16


@keras.saving.register_keras_serializable(package="bert_tf")
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` (same rate, seeds, config and checkpoint), computed more cheaply.

    Keras draws one float of noise per element in the input's dtype (slow in bfloat16 on
    CPUs), selects against zeros, and its gradient selects again. Here each 32-bit random
    word gives two 16-bit draws, so the random generator, which dominates, does half the
    work; an element is dropped when its draw is below round(rate·2¹⁶), and the kept ones
    are scaled by 2¹⁶ / (2¹⁶ - that threshold), so the expectation is kept exactly (the
    rate is quantized to 1/65536). Input and gradient are each one multiply by the mask.
    BERT runs 4L + 1 dropouts per step, over [B, S, H] and [B, N, S, S].

    Example:
    >>> layer = Dropout(0.5, seed=1)
    >>> out = layer(tf.ones([1000]), training=True)
    >>> sorted(set(out.numpy().tolist()))
    [0.0, 2.0]
    >>> bool(tf.reduce_all(layer(tf.ones([3])) == 1.0))  # inference: identity
    True
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        size = tf.size(inputs)
        # Keras keeps its seed state in int64; stateless ops under XLA want int32 seeds.
        seed = tf.cast(tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32)
        words = tf.random.stateless_uniform([(size + 1) // 2], seed, minval=None, maxval=None,
                                            dtype=tf.uint32)
        draws = tf.reshape(tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size],
                           tf.shape(inputs))
        threshold = round(self.rate * _LEVELS)
        scale = tf.constant(_LEVELS / (_LEVELS - threshold), inputs.dtype)
        mask = tf.where(draws >= threshold, scale, tf.zeros([], inputs.dtype))
        return inputs * mask
