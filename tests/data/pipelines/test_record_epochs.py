"""Static pipeline epochs: each record once per epoch, shuffled across all files, for any
sharding."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pipelines import pretraining_dataset as pd
from tests.data.pipelines.test_pretraining_dataset import P, S, _google_research_record, _write

NUM_RECORDS = 480


def _record_files(tmp_path, num_files, equal_sizes):
    """Writes records 0..NUM_RECORDS-1 in order over `num_files` files; returns the paths."""
    if equal_sizes:
        sizes = [NUM_RECORDS // num_files] * num_files
    else:  # Uneven files: a random split with every file non-empty.
        cuts = np.sort(np.random.default_rng(num_files).choice(np.arange(1, NUM_RECORDS),
                                                               num_files - 1, replace=False))
        sizes = np.diff([0, *cuts, NUM_RECORDS]).tolist()
    starts = np.cumsum([0] + sizes)
    return [_write(tmp_path / f"r{f:02d}.tfrecord", [_google_research_record(i)[0]
                                                     for i in range(start, start + size)])
            for f, (start, size) in enumerate(zip(starts, sizes))]


def _stream(paths, num_pipelines, num_batches, batch_size=16, seed=7,
            shuffle_buffer_size=NUM_RECORDS):
    """Record numbers of the first `num_batches` global batches, pipeline by pipeline."""
    streams = []
    for pipeline_id in range(num_pipelines):
        context = tf.distribute.InputContext(num_input_pipelines=num_pipelines,
                                             input_pipeline_id=pipeline_id,
                                             num_replicas_in_sync=num_pipelines)
        dataset = pd.pretraining_dataset(paths, batch_size, S, P, is_training=True, seed=seed,
                                         input_context=context if num_pipelines > 1 else None,
                                         shuffle_buffer_size=shuffle_buffer_size)
        # Column 10 holds 2000 + the record number (see _google_research_record).
        streams.append(np.concatenate([b["input_word_ids"][:, 10] - 2000
                                       for b in dataset.take(num_batches)]))
    return streams


def _spearman(a, b):
    rank_a, rank_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return np.corrcoef(rank_a, rank_b)[0, 1]


@pytest.mark.parametrize("num_pipelines", [1, 2])
@pytest.mark.parametrize("num_files, equal_sizes", [(1, True), (3, False), (8, True), (20, False)])
def test_each_record_once_per_epoch(tmp_path, num_files, equal_sizes, num_pipelines):
    paths = _record_files(tmp_path, num_files, equal_sizes)
    epoch_batches = NUM_RECORDS // 16
    streams = _stream(paths, num_pipelines, 2 * epoch_batches)
    # Each pipeline's first epoch is its share of the records, each once; together they are all.
    share = NUM_RECORDS // num_pipelines
    first_epochs = [stream[:share] for stream in streams]
    assert all(len(set(epoch)) == share for epoch in first_epochs)
    assert sorted(np.concatenate(first_epochs)) == list(range(NUM_RECORDS))
    # So does the next epoch, in a new order.
    second_epochs = [stream[share:2 * share] for stream in streams]
    assert sorted(np.concatenate(second_epochs)) == list(range(NUM_RECORDS))
    assert not np.array_equal(np.concatenate(second_epochs), np.concatenate(first_epochs))
    # Stream position vs position in the files: no rank correlation with a buffer as big as the
    # data (null sd 1/sqrt(n-1) < 0.065 for n >= 240; the bound is 3 sd).
    for epoch in first_epochs:
        assert abs(_spearman(np.arange(len(epoch)), epoch)) < 0.2, _spearman(np.arange(len(epoch)),
                                                                             epoch)


def test_small_buffer_mixes_within_its_window(tmp_path):
    paths = _record_files(tmp_path, 1, True)
    (stream,) = _stream(paths, 1, NUM_RECORDS // 16, shuffle_buffer_size=64)
    # A 64-record buffer can hold a record back, but never emit it before it is read.
    assert np.all(stream < np.arange(len(stream)) + 64)
    assert sorted(stream) == list(range(NUM_RECORDS)) and not np.array_equal(stream,
                                                                             np.sort(stream))


def test_files_are_read_once_at_a_time(tmp_path):
    """One file: the first batches are all distinct records (a file opened twice would repeat
    them)."""
    paths = _record_files(tmp_path, 1, True)
    (stream,) = _stream(paths, 1, 8, shuffle_buffer_size=16)
    assert len(set(stream)) == len(stream) == 128
