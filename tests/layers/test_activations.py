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
