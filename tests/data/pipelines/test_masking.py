"""Stateless in-graph masking: budgets, whole words, 80/10/10, reproducibility."""

import numpy as np
import tensorflow as tf

from bert_tf.data.pipelines import masking

CLS, SEP, MASK = 101, 102, 103


def _batch(rows=32, seed=0):
    """Packed rows `[CLS] words [SEP] words [SEP]`; words of 1-3 pieces, piece ids 1000+."""
    rng = np.random.default_rng(seed)
    ids, starts = [], []
    for _ in range(rows):
        row_ids, row_starts = [CLS], [True]
        for _segment in range(2):
            for _ in range(rng.integers(3, 15)):
                pieces = rng.integers(1, 4)
                row_ids += rng.integers(1000, 5000, pieces).tolist()
                row_starts += [True] + [False] * (pieces - 1)
            row_ids.append(SEP)
            row_starts.append(True)
        ids.append(row_ids)
        starts.append(row_starts)
    return tf.ragged.constant(ids, dtype=tf.int32), tf.ragged.constant(starts, dtype=tf.bool)


def _mask(ids, starts, seed, whole_word_mask, rate=0.15, max_predictions=5):
    return masking.mask_batch(ids, starts, tf.constant(seed, tf.int64), 30522, MASK, [CLS, SEP],
                              rate, max_predictions, whole_word_mask)


def test_whole_words_within_budget():
    ids, starts = _batch()
    _, positions, _ = _mask(ids, starts, [3, 4], whole_word_mask=True, rate=0.3)
    for row_ids, row_starts, row_positions in zip(ids.to_list(), starts.to_list(),
                                                  positions.to_list()):
        budget = min(5, max(1, round(len(row_ids) * 0.3)))
        assert 1 <= len(row_positions) <= budget
        word = np.cumsum(row_starts)
        chosen = set(row_positions)
        for w in set(word[row_positions]):
            assert chosen >= set(np.nonzero(word == w)[0]), "a word was masked partly"
        assert not {row_ids[p] for p in row_positions} & {CLS, SEP}


def test_piece_masking_counts_and_values():
    ids, starts = _batch(rows=200)
    masked, positions, labels = _mask(ids, starts, [5, 6], whole_word_mask=False,
                                      max_predictions=1000)
    selectable = ids.row_lengths().numpy() - 3
    # RandomItemSelector.
    np.testing.assert_array_equal(positions.row_lengths(), np.ceil(selectable * 0.15))
    values = tf.gather(masked, positions, batch_dims=1).flat_values.numpy()
    labels = labels.flat_values.numpy()
    # ~950 predictions: binomial sd of the 80% share is 0.013, of the 10% shares 0.01.
    assert abs(np.mean(values == MASK) - 0.8) < 0.045
    assert abs(np.mean((values != MASK) & (values == labels)) - 0.1) < 0.035


def test_same_seed_same_masks():
    ids, starts = _batch()
    for whole_word_mask in (False, True):
        first = _mask(ids, starts, [1, 2], whole_word_mask)
        again = _mask(ids, starts, [1, 2], whole_word_mask)
        other = _mask(ids, starts, [1, 3], whole_word_mask)
        assert first[0].to_list() == again[0].to_list() and first[1].to_list() == again[1].to_list()
        assert first[1].to_list() != other[1].to_list()
