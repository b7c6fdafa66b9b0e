"""A lone request (batch of one) skips packing: same outputs as the packed path."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertEncoder
from tests.fixtures import TINY_CONFIG


@pytest.fixture(scope="module")
def encoder():
    return BertEncoder(TINY_CONFIG)


def _outputs(encoder, inputs, single_sequence_padded):
    encoder.single_sequence_padded = single_sequence_padded
    try:
        return tf.function(lambda x: encoder(x, training=False))(inputs)
    finally:
        encoder.single_sequence_padded = False


@pytest.mark.parametrize("mask", [
    [1, 1, 1, 1, 1, 0, 0, 0],  # padded to a multiple of 8, as serving_default packs
    [1, 1, 1, 1, 1, 1, 1, 1],  # no padding
    [1, 1, 0, 1, 1, 0, 0, 0],  # a hole (serve_tokenized takes any mask)
    [0, 0, 0, 0, 0, 0, 0, 0],  # nothing real: the pooler reads tanh(bias), as packed
    [1],
])
def test_batch_of_one_equals_the_packed_path(encoder, mask):
    mask = tf.constant([mask], tf.int32)
    ids = tf.random.stateless_uniform(mask.shape, [1, 2], 1, TINY_CONFIG.vocab_size,
                                      tf.int32) * mask
    inputs = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": tf.zeros_like(mask)}
    packed = _outputs(encoder, inputs, False)
    single = _outputs(encoder, inputs, True)
    for name in ("pooled_output", "sequence_output"):
        assert single[name].shape == packed[name].shape
        np.testing.assert_allclose(single[name], packed[name], atol=1e-5)
    for single_layer, packed_layer in zip(single["encoder_outputs"], packed["encoder_outputs"]):
        np.testing.assert_allclose(single_layer, packed_layer, atol=1e-5)
    # Zero at padding, as the packed path gives.
    assert np.all(single["sequence_output"].numpy()[mask.numpy() == 0] == 0)


def test_larger_batches_stay_packed(encoder):
    mask = tf.constant([[1, 1, 1, 0], [1, 1, 0, 0]], tf.int32)
    inputs = {"input_word_ids": mask * 7, "input_mask": mask, "input_type_ids": 0 * mask}
    np.testing.assert_array_equal(_outputs(encoder, inputs, True)["sequence_output"],
                                  _outputs(encoder, inputs, False)["sequence_output"])
