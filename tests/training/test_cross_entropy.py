"""sparse_cross_entropy against TF's fused kernel (values, gradients) and argmax (correct)."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.cross_entropy import sparse_cross_entropy


@pytest.mark.parametrize("shape, scale", [((3, 4, 37), 1.0), ((5, 2), 1.0), ((2, 3, 11), 80.0)])
def test_values_and_gradients_equal_tf_kernel(shape, scale):
    # scale 80: logits far from 0, where an unshifted exp would overflow.
    rng = np.random.default_rng(0)
    logits = tf.constant(rng.normal(size=shape) * scale, tf.float32)
    labels = tf.constant(rng.integers(0, shape[-1], size=shape[:-1]), tf.int32)
    upstream = tf.constant(rng.normal(size=shape[:-1]), tf.float32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        ours, correct = sparse_cross_entropy(labels, logits)
        reference = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        ours_sum, reference_sum = (tf.reduce_sum(x * upstream) for x in (ours, reference))
    np.testing.assert_allclose(ours, reference, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(tape.gradient(ours_sum, logits),
                               tape.gradient(reference_sum, logits), atol=1e-6)
    np.testing.assert_array_equal(correct, np.float32(np.argmax(logits, -1) == labels.numpy()))
    assert tape.gradient(tf.reduce_sum(correct), logits) is None


def test_out_of_range_label_raises():
    with pytest.raises(tf.errors.InvalidArgumentError):
        sparse_cross_entropy(tf.constant([2]), tf.constant([[0.0, 1.0]]))
