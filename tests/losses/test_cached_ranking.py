"""CachedMultipleNegativesRankingLoss (GradCache) gives the plain loss's value (sentence-
transformers' cached value) and gradients, in mini-batches, eager and traced; with dropout its
second pass replays the first pass's masks."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.keras_tasks import SentenceEncoder
from bert_tf.losses import (
    CachedMultipleNegativesRankingLoss,
    LossConfigError,
    MatryoshkaLoss,
    MultipleNegativesRankingLoss,
)
from bert_tf.losses.contrastive_gradients import contrastive_loss_and_gradients, random_state
from bert_tf.models import BertEncoder
from tests.fixtures import TINY_CONFIG, without_dropout


def _rows_of(reference):
    """A table of the fixture's embeddings and ids [8, 3, 1] pointing at its rows."""
    table = tf.Variable(np.concatenate([reference[n] for n in ("anchors", "positives",
                                                                "negatives")]))
    rows = np.arange(24).reshape(3, 8).T[..., None]  # row i: anchor i, positive i, negative i
    ids = {"input_word_ids": tf.constant(rows, tf.int32)}
    return table, ids


@pytest.mark.parametrize("traced", [False, True])
def test_value_and_gradients_equal_the_plain_loss(reference, traced):
    table, ids = _rows_of(reference)

    def encode(flat):
        return tf.gather(table, flat["input_word_ids"][:, 0])

    def run(loss):
        step = lambda: contrastive_loss_and_gradients(loss, encode, ids, [table])
        value, (gradient,) = tf.function(step)() if traced else step()
        return float(value), tf.convert_to_tensor(gradient).numpy()

    cached_value, cached_gradient = run(CachedMultipleNegativesRankingLoss(mini_batch_size=5))
    plain_value, plain_gradient = run(MultipleNegativesRankingLoss())
    np.testing.assert_allclose(cached_value, reference["cached_negatives"], rtol=1e-5)
    np.testing.assert_allclose(cached_value, plain_value, rtol=1e-6)
    np.testing.assert_allclose(cached_gradient, plain_gradient, atol=1e-7)
    assert np.abs(plain_gradient).max() > 1e-3


def _encoder_batch(rows=4, columns=2, width=7):
    rng = np.random.default_rng(0)
    words = rng.integers(5, TINY_CONFIG.vocab_size, size=(rows, columns, width))
    mask = np.ones_like(words)
    mask[:, :, 5:] = 0  # some padding
    return {"input_word_ids": tf.constant(words * mask, tf.int32),
            "input_mask": tf.constant(mask, tf.int32),
            "input_type_ids": tf.zeros_like(tf.constant(words), tf.int32)}


@pytest.mark.parametrize("config, mini_batch_size, wrap", [
    (without_dropout(TINY_CONFIG), 3, False),
    (without_dropout(TINY_CONFIG), 3, True),  # Matryoshka over the cached loss
    (TINY_CONFIG, 8, False),  # dropout on, one mini-batch: the second pass must replay it
])
def test_an_encoders_gradients_equal_the_plain_loss(config, mini_batch_size, wrap):
    model = SentenceEncoder(BertEncoder(config))
    ids = _encoder_batch()
    state = random_state(model)
    start = [v.numpy() for v in state]

    def run(loss):
        for variable, value in zip(state, start):
            variable.assign(value)
        if wrap:
            loss = MatryoshkaLoss(loss, dims=(12, 6))
        value, gradients = contrastive_loss_and_gradients(
            loss, lambda flat: model(flat, training=True), ids, model.trainable_variables,
            replay=state)
        return float(value), [None if g is None else tf.convert_to_tensor(g).numpy()
                              for g in gradients]

    cached = run(CachedMultipleNegativesRankingLoss(mini_batch_size=mini_batch_size))
    plain = run(MultipleNegativesRankingLoss())
    np.testing.assert_allclose(cached[0], plain[0], rtol=1e-5)
    assert [g is None for g in cached[1]] == [g is None for g in plain[1]]  # the unused pooler
    largest = max(np.abs(g).max() for g in plain[1] if g is not None)
    for mine, theirs in zip(cached[1], plain[1]):
        if mine is not None:  # float32 sums in another order: to 1e-6 of the largest gradient
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-6 * largest)
    if config.hidden_dropout_prob:
        assert state, "the tiny encoder's dropout has a random stream to replay"


def test_mini_batch_size_must_be_positive():
    with pytest.raises(LossConfigError, match="mini_batch_size"):
        CachedMultipleNegativesRankingLoss(mini_batch_size=0)
