"""SentenceEncoder's contrastive `fit` on text pairs: batches without repeated texts, the
cached loss, truncated embeddings, and two replicas taking one device's step (negatives
gathered across them); bad pairs refused in one line."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.keras_tasks import SentenceEncoder, TaskInputError
from bert_tf.keras_tasks.sentence_training import no_duplicate_batches
from bert_tf.losses import (
    CachedMultipleNegativesRankingLoss,
    MatryoshkaLoss,
    MultipleNegativesRankingLoss,
)
from bert_tf.training.distribution import get_strategy
from tests import fixtures
from tests.keras_tasks.conftest import TEXTS, fit_under
from tests.losses.conftest import numpy_ranking_loss

# Each text with a paraphrase-like partner (its words reordered), so pairs are learnable.
PAIRS = {"anchor": TEXTS, "positive": [" ".join(reversed(t.split())) for t in TEXTS]}


@pytest.fixture(scope="module")
def still_model_dir(tmp_path_factory):
    """A tiny encoder directory (MiniLM's vocab) without dropout: steps compare exactly."""
    model_dir = str(tmp_path_factory.mktemp("still") / "model")
    fixtures.write_tiny_model_dir(model_dir, vocab_file=fixtures.minilm_vocab_file(),
                                  lower_case=True, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    return model_dir


def test_batches_never_hold_a_text_twice_and_each_row_comes_once_an_epoch():
    rows = [(f"q{i % 7}", f"p{i % 5}") for i in range(40)]  # many repeats
    batches = no_duplicate_batches(rows, 4, seed=3, epoch=0)
    assert sorted(i for batch in batches for i in batch) == list(range(40))
    for batch in batches:
        texts = [text for i in batch for text in rows[i]]
        assert len(texts) == len(set(texts)), batch
    assert batches == no_duplicate_batches(rows, 4, seed=3, epoch=0)
    assert batches != no_duplicate_batches(rows, 4, seed=3, epoch=1)
    full = no_duplicate_batches(rows, 4, seed=3, epoch=0, drop_remainder=True)
    assert full and all(len(batch) == 4 for batch in full)


@pytest.mark.parametrize("setting", ["float32", "mixed_bfloat16"])
def test_fit_on_pairs_moves_every_weight(tiny_model_dir, setting):
    def build():
        model = SentenceEncoder.from_pretrained(tiny_model_dir)
        model.compile(loss=MultipleNegativesRankingLoss())
        return model

    fit_under(setting, build, lambda model: model.fit(PAIRS, batch_size=4, verbose=0))


def _one_step(model_dir, loss, batch_size=8, strategy=None, pairs=PAIRS, **model_kwargs):
    """The loss and the weights after one SGD step of `fit` on `pairs`."""
    with (strategy or tf.distribute.get_strategy()).scope():
        model = SentenceEncoder.from_pretrained(model_dir, **model_kwargs)
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss=loss)
    history = model.fit(pairs, batch_size=batch_size, epochs=1, verbose=0)
    return history.history["loss"][0], [w.numpy() for w in model.trainable_weights]


def test_two_replicas_take_the_one_device_step(still_model_dir):
    loss, weights = _one_step(still_model_dir, MultipleNegativesRankingLoss(), batch_size=8)
    mirrored = _one_step(still_model_dir, MultipleNegativesRankingLoss(), batch_size=8,
                         strategy=get_strategy("mirrored"))
    np.testing.assert_allclose(mirrored[0], loss, rtol=1e-5)
    for theirs, ours in zip(mirrored[1], weights):
        np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)
    # One batch of 8 anchors, each against 8 candidates; each replica's 4 rows ranked among
    # their own 4 alone would give another loss.
    order = no_duplicate_batches(list(zip(*PAIRS.values())), 8, seed=0, epoch=0)[0]
    start = SentenceEncoder.from_pretrained(still_model_dir)
    anchors, positives = (start.predict([PAIRS[c][i] for i in order], verbose=0)
                          for c in ("anchor", "positive"))
    np.testing.assert_allclose(loss, numpy_ranking_loss([anchors, positives]), rtol=1e-4)
    within = np.mean([numpy_ranking_loss([anchors[half], positives[half]])
                      for half in (slice(0, 4), slice(4, 8))])
    assert abs(within - loss) > 1e-2


def test_the_cached_loss_takes_the_plain_step(still_model_dir):
    plain = _one_step(still_model_dir, MultipleNegativesRankingLoss())
    cached = _one_step(still_model_dir, CachedMultipleNegativesRankingLoss(mini_batch_size=5))
    np.testing.assert_allclose(cached[0], plain[0], rtol=1e-5)
    for theirs, ours in zip(cached[1], plain[1]):
        np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)


def test_truncated_embeddings_train_and_survive_keras_save(still_model_dir, tmp_path):
    model = SentenceEncoder.from_pretrained(still_model_dir, truncate_dim=6)
    model.compile(loss=MatryoshkaLoss(MultipleNegativesRankingLoss(), dims=(6, 3)))
    model.fit(PAIRS, batch_size=4, verbose=0)
    embeddings = model.predict(TEXTS, verbose=0)
    assert embeddings.shape == (len(TEXTS), 6)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-5)
    model.save(str(tmp_path / "truncated.keras"))
    loaded = keras.models.load_model(str(tmp_path / "truncated.keras"))
    assert loaded.truncate_dim == 6
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0), embeddings, atol=1e-6)
    with pytest.raises(TaskInputError, match=r"truncate_dim must be an integer in 1\.\.12"):
        SentenceEncoder.from_pretrained(still_model_dir, truncate_dim=13)


@pytest.mark.parametrize("pairs, batch_size, message", [
    ({"anchor": TEXTS}, 4, r"must hold the columns \"anchor\" and \"positive\".*has \['anchor'\]"),
    ({**PAIRS, "negative": TEXTS[:3]}, 4, "columns differ in length"),
    ({"anchor": TEXTS, "positive": [TEXTS[0]] * 8}, 4,
     "batch size 4 is above the 1 distinct positive texts"),
    ({"anchor": ["", " "], "positive": ["a", "b"]}, 4, "holds no row with both"),
])
def test_bad_pairs_are_one_line(still_model_dir, pairs, batch_size, message):
    model = SentenceEncoder.from_pretrained(still_model_dir)
    model.compile(loss=MultipleNegativesRankingLoss())
    with pytest.raises(TaskInputError, match=message):
        model.fit(pairs, batch_size=batch_size, verbose=0)


def test_a_negative_column_with_the_symmetric_loss_is_refused(still_model_dir):
    model = SentenceEncoder.from_pretrained(still_model_dir)
    model.compile(loss=MultipleNegativesRankingLoss(symmetric=True))
    with pytest.raises(TaskInputError, match=r"symmetric=True\) takes no negative column"):
        model.fit({**PAIRS, "negative": TEXTS}, batch_size=4, verbose=0)
