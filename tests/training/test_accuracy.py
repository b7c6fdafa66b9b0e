"""top1_correct agrees with argmax on untied logits, for every rank the losses use."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.accuracy import top1_correct


@pytest.mark.parametrize("shape", [[6, 2], [4, 5, 37], [2, 3, 4, 11]])
def test_matches_argmax(shape):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=shape).astype(np.float32)
    labels = rng.integers(0, shape[-1], size=shape[:-1]).astype(np.int32)
    labels.flat[::2] = logits.argmax(-1).flat[::2]  # make half of them right
    got = top1_correct(tf.constant(logits), tf.constant(labels)).numpy()
    np.testing.assert_array_equal(got, (logits.argmax(-1) == labels).astype(np.float32))
    assert got.shape == tuple(shape[:-1]) and 0 < got.mean() < 1
