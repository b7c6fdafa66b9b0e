"""MultipleNegativesRankingLoss equals sentence-transformers' and a numpy computation, value
and gradient; as a Keras loss and from its config."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.losses import LossConfigError, MultipleNegativesRankingLoss
from bert_tf.losses.contrastive_gradients import replica_loss
from tests.losses.conftest import numpy_ranking_loss

CASES = [  # (fixture key, loss arguments, columns)
    ("mnrl", {}, ("anchors", "positives")),
    ("mnrl_negatives", {}, ("anchors", "positives", "negatives")),
    ("mnrl_scale_10", {"scale": 10.0}, ("anchors", "positives")),
    ("symmetric", {"symmetric": True}, ("anchors", "positives")),
]


@pytest.mark.parametrize("key, arguments, names", CASES)
def test_equals_sentence_transformers_and_numpy(reference, key, arguments, names):
    columns = [reference[name] for name in names]
    loss = MultipleNegativesRankingLoss(**arguments)
    value = float(replica_loss(loss, [tf.constant(c) for c in columns]))
    np.testing.assert_allclose(value, reference[key], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value, numpy_ranking_loss(columns, **arguments), rtol=1e-5,
                               atol=1e-6)
    # As a Keras loss: y_pred [B, C, D], y_true unused; the mean over anchors.
    stacked = np.stack(columns, axis=1)
    np.testing.assert_allclose(float(loss(np.zeros(len(stacked)), stacked)), reference[key],
                               rtol=1e-5, atol=1e-6)


def test_gradients_equal_sentence_transformers(reference):
    names = ("anchors", "positives", "negatives")
    columns = [tf.constant(reference[name]) for name in names]
    with tf.GradientTape() as tape:
        tape.watch(columns)
        value = replica_loss(MultipleNegativesRankingLoss(), columns)
    for name, gradient in zip(names, tape.gradient(value, columns)):
        np.testing.assert_allclose(gradient.numpy(), reference[f"mnrl_negatives_grad_{name}"],
                                   rtol=1e-4, atol=1e-7)


def test_config_round_trip_and_bad_scale():
    loss = MultipleNegativesRankingLoss(scale=10.0, symmetric=True)
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert (type(again), again.scale, again.symmetric) == (type(loss), 10.0, True)
    with pytest.raises(LossConfigError, match="scale=0"):
        MultipleNegativesRankingLoss(scale=0)


def test_the_symmetric_loss_refuses_a_negative_column(reference):
    triplet = np.stack([reference[n] for n in ("anchors", "positives", "negatives")], axis=1)
    with pytest.raises(LossConfigError, match=r"symmetric=True\) takes \(anchor, positive\) "
                       "pairs only; received a negative column"):
        MultipleNegativesRankingLoss(symmetric=True)(np.zeros(8), triplet)
