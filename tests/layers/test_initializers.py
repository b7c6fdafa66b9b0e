"""truncated_normal: google-research's initializer, a normal cut at two standard deviations."""

import math

import numpy as np

from bert_tf.layers.initializers import truncated_normal


def test_draws_lie_within_two_stddev_with_the_truncated_spread():
    values = truncated_normal(0.02)(shape=(200, 500)).numpy()
    assert np.abs(values).max() <= 2 * 0.02
    # A unit normal cut to [-2, 2] has variance 1 - 2·2·φ(2) / (2Φ(2) - 1), about 0.774.
    pdf = math.exp(-2.0) / math.sqrt(2 * math.pi)
    expected_std = 0.02 * math.sqrt(1 - 4 * pdf / math.erf(2 / math.sqrt(2)))
    # 100,000 draws: the standard error is about 0.2% of the std, and std/316 for the mean.
    np.testing.assert_allclose(values.std(), expected_std, rtol=0.01)
    assert abs(values.mean()) < 5 * expected_std / math.sqrt(values.size)
