"""Activation functions by their `hidden_act` names in BERT configs."""

import math

import tensorflow as tf


@tf.custom_gradient
def gelu(x):
    """Exact GELU, x·Φ(x) with the Gaussian CDF via erf: Hugging Face's `gelu`.

    The gradient is written out, Φ(x) + x·φ(x), reusing the forward Φ(x): TF's automatic
    gradient of the erf expression takes about twice as many element-wise passes, and this
    runs over every [B, S, 4H] intermediate activation.
    """
    cdf = 0.5 * (1.0 + tf.math.erf(x * (1.0 / math.sqrt(2.0))))

    def gradient(upstream):
        pdf = tf.exp(tf.square(x) * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
        return upstream * (cdf + x * pdf)

    return x * cdf, gradient


def gelu_approximate(x):
    """Tanh approximation of GELU: what google-research's `modeling.gelu` computed."""
    return tf.nn.gelu(x, approximate=True)


ACTIVATIONS = {
    "gelu": gelu,
    "gelu_new": gelu_approximate,
    "gelu_approximate": gelu_approximate,
    "gelu_pytorch_tanh": gelu_approximate,
    "relu": tf.nn.relu,
    "tanh": tf.math.tanh,
    "swish": tf.nn.silu,
    "silu": tf.nn.silu,
}


def get_activation(name):
    """Returns the activation function for a config's `hidden_act` name."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"Unknown activation `{name}`. Expected one of {sorted(ACTIVATIONS)}."
        ) from None
