"""length_sorted_batches and trim_to_longest: every example once, alike lengths, random order."""

import collections

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.finetuning.length_bucketing import length_sorted_batches, trim_to_longest

N, BATCH, WINDOW = 1000, 10, 20


@pytest.fixture(scope="module")
def lengths():
    # Real-text-like: mostly short, a long tail (log-normal, median ~24, capped at 128).
    rng = np.random.default_rng(0)
    return np.minimum(np.exp(rng.normal(3.2, 0.7, N)).astype(np.int32) + 2, 128)


def _batches(lengths, **kwargs):
    dataset = tf.data.Dataset.from_tensor_slices({"id": np.arange(N), "length": lengths})
    batches = length_sorted_batches(dataset, lambda e: e["length"], BATCH,
                                    window_batches=WINDOW, **kwargs)
    return [{k: v.numpy() for k, v in b.items()} for b in batches]


def test_every_example_once_with_its_own_length(lengths):
    batches = _batches(lengths, seed=0)
    ids = np.concatenate([b["id"] for b in batches])
    assert sorted(ids.tolist()) == list(range(N))
    for b in batches:
        np.testing.assert_array_equal(b["length"], lengths[b["id"]])


def test_batches_hold_alike_lengths(lengths):
    spread = [np.ptp(b["length"]) for b in _batches(lengths, seed=0)]
    unsorted = [np.ptp(lengths[i:i + BATCH]) for i in range(0, N, BATCH)]
    assert np.mean(spread) < np.mean(unsorted) / 4


def test_without_seed_each_window_runs_shortest_first(lengths):
    batches = _batches(lengths)
    per_window = WINDOW * BATCH
    for start in range(0, N, per_window):
        window = np.concatenate([b["length"] for b in batches[start // BATCH:
                                                               (start + per_window) // BATCH]])
        np.testing.assert_array_equal(window, np.sort(lengths[start:start + per_window]))


def test_training_order_stays_random_across_lengths(lengths):
    first = _batches(lengths, seed=0)
    means = np.array([b["length"].mean() for b in first])
    # Within each window the batch order is shuffled: not ascending, and no trend with position.
    window = means[:WINDOW]
    assert not np.all(np.diff(window) >= 0)
    rank_corr = np.corrcoef(np.argsort(np.argsort(window)), np.arange(WINDOW))[0, 1]
    assert abs(rank_corr) < 0.6
    # Same seed, same order (a resumed run sees the same batches).
    again = _batches(lengths, seed=0)
    assert all(np.array_equal(a["id"], b["id"]) for a, b in zip(first, again))


def test_reshuffled_each_epoch(lengths):
    dataset = tf.data.Dataset.from_tensor_slices({"id": np.arange(N), "length": lengths})
    batches = length_sorted_batches(dataset.repeat(2), lambda e: e["length"], BATCH,
                                    window_batches=WINDOW, seed=0)
    ids = np.concatenate([b["id"].numpy() for b in batches])
    assert collections.Counter(ids.tolist()) == {i: 2 for i in range(N)}


def test_drop_remainder_gives_whole_batches(lengths):
    dataset = tf.data.Dataset.from_tensor_slices({"id": np.arange(N - 3), "length": lengths[3:]})
    batches = list(length_sorted_batches(dataset, lambda e: e["length"], BATCH,
                                         window_batches=WINDOW, drop_remainder=True, seed=1))
    assert all(b["id"].shape[0] == BATCH for b in batches)
    # Windows of 200, 200, 200, 200 and 197 examples: the last loses its partial batch of 7.
    assert sum(b["id"].shape[0] for b in batches) == 990


def test_tuple_elements_pass_through():
    dataset = tf.data.Dataset.from_tensor_slices((np.array([3, 1, 2]), np.array([30, 10, 20])))
    batches = list(length_sorted_batches(dataset, lambda e: e[0], 2, window_batches=2))
    assert [b[1].numpy().tolist() for b in batches] == [[10, 20], [30]]


def test_trim_to_longest_cuts_only_padding():
    mask = np.zeros((3, 32), np.int32)
    for row, n in enumerate([5, 11, 7]):
        mask[row, :n] = 1
    ids = np.where(mask == 1, np.arange(1, 33), 0)
    features = {"input_mask": tf.constant(mask), "input_word_ids": tf.constant(ids),
                "spans": tf.zeros([3, 32, 2]), "label": tf.constant([1, 2, 3])}
    trimmed = trim_to_longest(features)
    assert trimmed["input_word_ids"].shape == (3, 16)  # 11 rounded up to 16
    assert trimmed["spans"].shape == (3, 16, 2)
    np.testing.assert_array_equal(trimmed["input_word_ids"], ids[:, :16])
    np.testing.assert_array_equal(trimmed["label"], [1, 2, 3])
    longer = dict(features, input_mask=tf.constant(mask | (np.arange(32) < 17)))
    assert trim_to_longest(longer)["input_mask"].shape == (3, 24)  # 17 rounded up to 24
    assert trim_to_longest(longer, "buckets")["input_mask"].shape == (3, 32)  # buckets 16, 32
    assert trim_to_longest(features, "buckets")["input_mask"].shape == (3, 16)


@pytest.mark.parametrize("count, drop_remainder", [(N, False), (N - 3, False), (N - 3, True)])
def test_count_gives_the_batches_their_true_cardinality(lengths, count, drop_remainder):
    dataset = tf.data.Dataset.from_tensor_slices(lengths[:count])
    batches = length_sorted_batches(dataset, lambda e: e, BATCH, window_batches=WINDOW,
                                    drop_remainder=drop_remainder, seed=0, count=count)
    assert int(batches.cardinality()) == sum(1 for _ in batches)  # assert_cardinality checks
