"""MatryoshkaLoss equals sentence-transformers' (its shrink into the plain loss, weighted) and
numpy's; dims above the embedding width are refused by name."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.losses import (
    CachedMultipleNegativesRankingLoss,
    LossConfigError,
    MatryoshkaLoss,
    MultipleNegativesRankingLoss,
)
from bert_tf.losses.contrastive_gradients import replica_loss
from tests.losses.conftest import numpy_ranking_loss

DIMS, WEIGHTS = (32, 16, 8), (1.0, 0.5, 0.25)  # the fixture's


def test_equals_sentence_transformers_and_numpy(reference):
    columns = [reference[n] for n in ("anchors", "positives", "negatives")]
    loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), dims=DIMS, weights=WEIGHTS)
    value = float(replica_loss(loss, [tf.constant(c) for c in columns]))
    np.testing.assert_allclose(value, reference["matryoshka_negatives"], rtol=1e-5)
    expected = sum(w * numpy_ranking_loss([c[:, :d] for c in columns])
                   for d, w in zip(DIMS, WEIGHTS))
    np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_dims_above_the_width_are_refused(reference):
    loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), dims=(64, 32))
    with pytest.raises(LossConfigError, match=r"\[64\] are above the embedding width 32"):
        loss(np.zeros(8), np.stack([reference["anchors"], reference["positives"]], axis=1))
    with pytest.raises(LossConfigError, match="one weight per dim"):
        MatryoshkaLoss(MultipleNegativesRankingLoss(), dims=(32, 16), weights=(1.0,))


def test_config_round_trip_keeps_the_inner_loss():
    loss = MatryoshkaLoss(CachedMultipleNegativesRankingLoss(mini_batch_size=4), dims=(12, 6))
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert isinstance(again.loss, CachedMultipleNegativesRankingLoss)
    assert (again.dims, again.weights, again.mini_batch_size) == ((12, 6), (1.0, 1.0), 4)
