"""An external merge sort of keyed records: sorted run files in, one sorted stream out.

The pipeline's global shuffle sorts each shard's records by a random 64-bit key.
Sorting a shard in memory would hold the whole shard (a tenth of a corpus's
records with ten shards); instead each work unit writes its records for a shard
as one sorted run file, and the shard is written by a streaming k-way merge of
its runs. Memory is then one work unit's records, whatever the corpus size,
and records never pass through the Beam runner (only run file names do).
Written by hand: Beam's Python SDK has no external sort (Java's `SortValues`
has no Python counterpart).

A run is a TFRecord file (so it lives wherever `tf.io.gfile` writes: local or
`gs://`) whose records are `key` (8 bytes, big-endian) + record: byte order is
then `(key, record)` order.

Example:
>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> write_run(f"{folder}/a", [(3, b"c"), (1, b"a")])
>>> write_run(f"{folder}/b", [(2, b"b")])
>>> list(merge_runs([f"{folder}/a", f"{folder}/b"], f"{folder}/merge"))
[b'a', b'b', b'c']
"""

import heapq
import os

import tensorflow as tf

from bert_tf.data.autotune import without_autotune
from bert_tf.data.records import tfrecord_writer

# Runs merged at once. Each open run holds one read batch (`_READ_BATCH` records, about
# 0.5 MB); more runs than this are merged in passes, so open files stay few.
FAN_IN = 64
_READ_BATCH = 512


def write_run(path, keyed_records):
    """Writes `(key, record)` pairs (key: int in [0, 2**64)) sorted by key, then record."""
    tf.io.gfile.makedirs(os.path.dirname(path))
    tfrecord_writer.write_shard(path, (key.to_bytes(8, "big") + record
                                       for key, record in sorted(keyed_records)))


def _read(path):
    # Batched: tf.data costs tens of microseconds per element, per batch it is per 512. One
    # thread and no autotuning: with its default thread pools, two workers merging at once
    # on two cores each took 3x as long (their threads spin against each other).
    one_thread = tf.data.Options()
    one_thread.threading.private_threadpool_size = 1
    batches = without_autotune(tf.data.TFRecordDataset(path).batch(_READ_BATCH))
    for batch in batches.with_options(one_thread).as_numpy_iterator():
        yield from batch


def merge_runs(paths, scratch_prefix, fan_in=FAN_IN):
    """Yields the records of the runs `paths` in key order, without their keys.

    Args:
      paths: run files (`write_run`).
      scratch_prefix: where intermediate runs go when there are more than
        `fan_in` runs (`<scratch_prefix>-<pass>-<group>`); each is deleted once merged.
      fan_in: the most runs read at once.
    """
    paths, merge_pass, scratch = list(paths), 0, []
    while len(paths) > fan_in:
        merged = []
        for group in range(0, len(paths), fan_in):
            merged.append(f"{scratch_prefix}-{merge_pass}-{group // fan_in}")
            tfrecord_writer.write_shard(merged[-1],
                                        heapq.merge(*map(_read, paths[group:group + fan_in])))
        tfrecord_writer.remove(scratch)
        paths, scratch, merge_pass = merged, merged, merge_pass + 1
    for keyed in heapq.merge(*map(_read, paths)):
        yield keyed[8:]
    tfrecord_writer.remove(scratch)
