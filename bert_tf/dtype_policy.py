"""The Keras dtype policies a run may use, set for a scope and always restored.

Keras keeps the policy in a global; a run that sets it and fails (or a test that forgets to
reset it) would leak it into everything built afterwards, so runs use `policy_scope`.

Example:
>>> with policy_scope("mixed_bfloat16"):
...     layer = keras.layers.Dense(4)     # computes in bfloat16, variables in float32
>>> keras.mixed_precision.global_policy().name
'float32'
"""

import contextlib

import keras

DTYPES = ("float32", "mixed_bfloat16", "mixed_float16")


@contextlib.contextmanager
def policy_scope(name):
    """Sets the global Keras dtype policy to `name` inside the block, then restores the old one."""
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
