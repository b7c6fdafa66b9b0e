import math

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.activations import get_activation

X = np.linspace(-6.0, 6.0, 101)


def test_gelu_is_exact_erf_form():
    expected = [0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))) for x in X]
    np.testing.assert_allclose(get_activation("gelu")(tf.constant(X)).numpy(), expected, atol=1e-12)


def test_gelu_gradient_is_the_analytic_derivative():
    # d/dx x·Φ(x) = Φ(x) + x·φ(x), in float64 with math.erf as the reference.
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = get_activation("gelu")(x)
    expected = [0.5 * (1.0 + math.erf(v / math.sqrt(2.0)))
                + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in X]
    gradient = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(gradient, expected, atol=1e-12)
    # And a numeric derivative, which knows nothing of the formula.
    h = 1e-6
    numeric = (get_activation("gelu")(x + h) - get_activation("gelu")(x - h)) / (2 * h)
    np.testing.assert_allclose(gradient, numeric.numpy(), atol=1e-8)


@pytest.mark.parametrize("dtype, tolerance", [(tf.float32, 1e-6), (tf.bfloat16, 1e-2)])
def test_training_gelu_has_the_values_and_gradient_of_gelu(dtype, tolerance):
    fused = get_activation("gelu", training=True)
    assert fused is not get_activation("gelu")  # the XLA-compiled variant
    x = tf.constant(X, dtype)
    upstream = tf.constant(np.cos(X), dtype)  # not all ones: the upstream factor is applied
    results = []
    for activation in (get_activation("gelu"), fused):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = activation(x)
        results.append((y, tape.gradient(y, x, output_gradients=upstream)))
    (y, grad), (fused_y, fused_grad) = results
    assert fused_y.dtype == dtype and fused_grad.dtype == dtype
    for a, b in ((fused_y, y), (fused_grad, grad)):
        np.testing.assert_allclose(tf.cast(a, tf.float32), tf.cast(b, tf.float32),
                                   rtol=tolerance, atol=tolerance)


def test_activations_without_a_training_variant_are_the_same_function():
    assert get_activation("relu", training=True) is get_activation("relu")


@pytest.mark.parametrize("name", ["gelu_new", "gelu_approximate"])
def test_gelu_new_is_google_research_tanh_form(name):
    # google-research modeling.gelu: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
    expected = [0.5 * x * (1.0 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
                for x in X]
    np.testing.assert_allclose(get_activation(name)(tf.constant(X)).numpy(), expected, rtol=1e-6,
                               atol=1e-12)


def test_the_two_gelus_differ():
    exact = get_activation("gelu")(tf.constant(X)).numpy()
    approximate = get_activation("gelu_new")(tf.constant(X)).numpy()
    assert 1e-5 < np.max(np.abs(exact - approximate)) < 1e-2


def test_unknown_activation():
    with pytest.raises(ValueError, match="Unknown activation `gleu`"):
        get_activation("gleu")


def test_every_config_hidden_act_has_an_activation():
    from bert_tf.configs import HIDDEN_ACTS
    from bert_tf.layers.activations import ACTIVATIONS

    assert set(HIDDEN_ACTS) == set(ACTIVATIONS)
