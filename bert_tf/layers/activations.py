"""Activation functions by their `hidden_act` names in BERT configs."""

import math

import tensorflow as tf


def gelu(x):
    """Exact GELU, x·Φ(x) with the Gaussian CDF via erf: Hugging Face's `gelu`."""
    return 0.5 * x * (1.0 + tf.math.erf(x / math.sqrt(2.0)))


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
