"""The weight initializer of google-research's BERT."""

import keras


def truncated_normal(stddev):
    """Truncated normal with `stddev = initializer_range`, as google-research's `create_initializer`."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
