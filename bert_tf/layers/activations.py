"""Activation functions by their `hidden_act` names in BERT configs."""

import math

import tensorflow as tf


def _cdf(x):
    return 0.5 * (1.0 + tf.math.erf(x * (1.0 / math.sqrt(2.0))))


def _derivative(x, cdf):
    return cdf + x * tf.exp(tf.square(x) * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))


@tf.custom_gradient
def gelu(x):
    """Exact GELU, x·Φ(x) with the Gaussian CDF via erf: Hugging Face's `gelu`.

    The gradient is written out, Φ(x) + x·φ(x), reusing the forward Φ(x): TF's automatic
    gradient of the erf expression takes about twice as many element-wise passes, and this
    runs over every [B, S, 4H] intermediate activation.
    """
    cdf = _cdf(x)
    return x * cdf, lambda upstream: upstream * _derivative(x, cdf)


@tf.function(jit_compile=True)
def _fused_forward(x):
    x32 = tf.cast(x, tf.float32)
    return tf.cast(x32 * _cdf(x32), x.dtype)


@tf.function(jit_compile=True)
def _fused_gradient(x, upstream):
    x32 = tf.cast(x, tf.float32)
    return tf.cast(tf.cast(upstream, tf.float32) * _derivative(x32, _cdf(x32)), x.dtype)


@tf.custom_gradient
def fused_gelu(x):
    """`gelu` with its forward and its gradient each one XLA-compiled loop, for training.

    TensorFlow runs `gelu` as ~5 element-wise kernels forward and ~7 backward, each a pass over
    the [B, S, 4H] activation (in bfloat16 each converts every element to float32 and back);
    XLA fuses each side into one pass, in float32 inside: 5.5 -> 2.2 ms forward + backward
    over a [4096, 512] bfloat16 activation on 2 CPU cores. Only the activation is compiled:
    XLA's CPU matmuls are slower than oneDNN's. Training only: TF Serving runs XLA only
    behind a flag, so exported and inference graphs keep `gelu`.

    Example:
    >>> fused_gelu(tf.constant([-1.0, 0.0, 1.0]))  # doctest: +SKIP
    """
    return _fused_forward(x), lambda upstream: _fused_gradient(x, upstream)


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


# Training variants of the activations that have one (see `fused_gelu`).
_TRAINING_ACTIVATIONS = {"gelu": fused_gelu}


def get_activation(name, training=False):
    """Returns the activation function for a config's `hidden_act` name.

    `training=True` gives the variant for training steps where there is one (same values).
    """
    if training and name in _TRAINING_ACTIVATIONS:
        return _TRAINING_ACTIVATIONS[name]
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"Unknown activation `{name}`. Expected one of {sorted(ACTIVATIONS)}."
        ) from None
