"""Writes pretraining TFRecord shards (google-research/bert features, see
`pretraining_records.RecordSerializer`).

Features (fixed length, names and dtypes of google-research
`create_pretraining_data.py`): `input_ids`, `input_mask`, `segment_ids`
[max_seq_length] int64; `masked_lm_positions`, `masked_lm_ids`
[max_predictions_per_seq] int64; `masked_lm_weights` [max_predictions_per_seq]
float; `next_sentence_labels` [1] int64 (1 = B is a random sentence).
"""

import os

import tensorflow as tf


def check_new_and_writable(paths):
    """Raises `ValueError` naming the path if an output file exists or cannot be created.

    Runs before any work, so a rerun never overwrites earlier output and a typo in
    the output directory fails at once.
    """
    for path in paths:
        if tf.io.gfile.exists(path):
            raise ValueError(f"output file {path} exists: delete it or choose another "
                             "--output_file")
        directory = os.path.dirname(path) or "."
        probe = f"{path}.probe-{os.getpid()}"
        try:
            tf.io.gfile.makedirs(directory)
            with tf.io.gfile.GFile(probe, "wb") as f:
                f.write(b"")
            tf.io.gfile.remove(probe)
        except (tf.errors.OpError, OSError) as error:
            message = getattr(error, "message", error)
            raise ValueError(f"cannot write output file {path}: {message}") from error


def remove(paths):
    """Deletes those of `paths` (files or folders) that exist."""
    for path in paths:
        if tf.io.gfile.isdir(path):
            tf.io.gfile.rmtree(path)
        elif tf.io.gfile.exists(path):
            tf.io.gfile.remove(path)


def write_shard(path, records):
    """Writes `records` (bytes) to the TFRecord file `path`; returns how many.

    The file is written as `<path>.incomplete` and renamed to `path` when
    complete, so a crashed run never leaves a partial shard that looks
    complete, and a retried write (distributed runners retry work) replaces the
    temporary file.

    Example:
    >>> import tempfile
    >>> write_shard(f"{tempfile.mkdtemp()}/a.tfrecord", [b"1", b"2"])
    2
    """
    temporary = path + ".incomplete"
    count = 0
    try:
        with tf.io.TFRecordWriter(temporary) as writer:
            for record in records:
                writer.write(record)
                count += 1
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.remove(temporary)
        raise
    tf.io.gfile.rename(temporary, path, overwrite=True)
    return count
