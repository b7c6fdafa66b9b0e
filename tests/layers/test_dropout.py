"""Dropout: Keras's contract (rate, rescaling, identity at inference), in any compute dtype."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.dropout import Dropout
from tests.harness import run_harness


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_drops_the_rate_and_rescales_the_rest(dtype):
    layer = Dropout(0.1, seed=3, dtype=keras.DTypePolicy(f"mixed_{dtype}" if dtype == "bfloat16"
                                                         else dtype))
    x = tf.ones([64, 128, 32], dtype)
    out = layer(x, training=True)
    assert out.dtype == dtype
    values = out.numpy().astype(np.float32)
    dropped = np.mean(values == 0.0)
    # 262,144 Bernoulli(0.1) draws: the standard error is 6e-4.
    assert abs(dropped - 0.1) < 0.003
    # Kept values are scaled so that the mean stays 1 (rate quantized to 1/65536).
    np.testing.assert_allclose(values[values != 0], 65536 / (65536 - 6554),
                               rtol=1e-2 if dtype == "bfloat16" else 1e-6)
    assert abs(values.mean() - 1.0) < 0.01


def test_gradient_is_the_same_mask():
    layer = Dropout(0.3, seed=0)
    x = tf.random.normal([16, 50])
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = layer(x, training=True)
    gradient = tape.gradient(out, x).numpy()
    kept = out.numpy() != 0
    np.testing.assert_allclose(gradient[kept], 65536 / (65536 - 19661), rtol=1e-6)
    assert np.all(gradient[~kept] == 0)


def test_inference_is_identity_and_masks_differ_between_calls():
    layer = Dropout(0.5, seed=1)
    x = tf.ones([200])
    np.testing.assert_array_equal(layer(x, training=False), x)
    first, second = layer(x, training=True), layer(x, training=True)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("shape", [[7], [3, 5], [2, 3, 5, 7]])
def test_odd_sizes_and_shapes_keep_their_shape(shape):
    out = Dropout(0.25, seed=2)(tf.ones(shape), training=True)
    assert out.shape == shape


def test_same_seed_same_masks_and_config_round_trip():
    a, b = Dropout(0.2, seed=7), Dropout(0.2, seed=7)
    x = tf.ones([500])
    np.testing.assert_array_equal(a(x, training=True), b(x, training=True))
    clone = Dropout.from_config(a.get_config())
    assert clone.rate == 0.2 and clone.seed == 7


@pytest.mark.filterwarnings("ignore:The model does not have any trainable weights")
def test_harness(tmp_path):
    x = tf.random.normal([3, 5, 7])
    run_harness(lambda: Dropout(0.3, seed=5), (x,), (3, 5, 7), tmp_path)
