"""Writes pretraining instances as google-research/bert TFRecords.

Features (fixed length, names and dtypes of google-research
`create_pretraining_data.py`): `input_ids`, `input_mask`, `segment_ids`
[max_seq_length] int64; `masked_lm_positions`, `masked_lm_ids`
[max_predictions_per_seq] int64; `masked_lm_weights` [max_predictions_per_seq]
float; `next_sentence_labels` [1] int64 (1 = B is a random sentence).
"""

import os

import tensorflow as tf


def _int64s(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _floats(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def serialize_instance(instance, max_seq_length, max_predictions_per_seq):
    """Returns a `TrainingInstance` as serialized `tf.train.Example` bytes.

    Serialization is deterministic (`deterministic=True`: protobuf map order is
    otherwise free to change between runs), so equal inputs give equal files.
    """
    length = len(instance.input_ids)
    if length > max_seq_length or len(instance.masked_lm_positions) > max_predictions_per_seq:
        raise ValueError(f"instance of {length} tokens / {len(instance.masked_lm_positions)} predictions does not fit "
                         f"max_seq_length={max_seq_length} / max_predictions_per_seq={max_predictions_per_seq}")
    pad = max_seq_length - length
    num_masked = len(instance.masked_lm_positions)
    pad_masked = max_predictions_per_seq - num_masked
    features = {
        "input_ids": _int64s(instance.input_ids + [0] * pad),
        "input_mask": _int64s([1] * length + [0] * pad),
        "segment_ids": _int64s(instance.segment_ids + [0] * pad),
        "masked_lm_positions": _int64s(instance.masked_lm_positions + [0] * pad_masked),
        "masked_lm_ids": _int64s(instance.masked_lm_ids + [0] * pad_masked),
        "masked_lm_weights": _floats([1.0] * num_masked + [0.0] * pad_masked),
        "next_sentence_labels": _int64s([1 if instance.is_random_next else 0]),
    }
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString(deterministic=True)


def check_writable(paths):
    """Raises `ValueError` naming the path if an output file cannot be created."""
    for path in paths:
        directory = os.path.dirname(path) or "."
        probe = f"{path}.probe-{os.getpid()}"
        try:
            tf.io.gfile.makedirs(directory)
            with tf.io.gfile.GFile(probe, "wb") as f:
                f.write(b"")
            tf.io.gfile.remove(probe)
        except (tf.errors.OpError, OSError) as error:
            raise ValueError(f"cannot write output file {path}: {getattr(error, 'message', error)}") from error


class ShardedWriter:
    """Writes records round-robin into several TFRecord files.

    Each file is written under `<path>.incomplete` and renamed to `path` only
    by `close()`, so a crashed run never leaves a partial shard that looks
    complete. Use as a context manager: on an exception the temporary files
    are deleted.

    Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> with ShardedWriter([f"{out}/a.tfrecord", f"{out}/b.tfrecord"]) as writer:
    ...     for record in (b"1", b"2", b"3"):
    ...         writer.write(record)
    >>> writer.counts
    [2, 1]
    """

    def __init__(self, paths):
        self.paths = list(paths)
        self.counts = [0] * len(self.paths)
        self._writers = [tf.io.TFRecordWriter(self._temporary(p)) for p in self.paths]
        self._next = 0

    @staticmethod
    def _temporary(path):
        return path + ".incomplete"

    def write(self, record):
        self._writers[self._next].write(record)
        self.counts[self._next] += 1
        self._next = (self._next + 1) % len(self._writers)

    def close(self):
        for writer, path in zip(self._writers, self.paths):
            writer.close()
            tf.io.gfile.rename(self._temporary(path), path, overwrite=True)

    def abort(self):
        for writer, path in zip(self._writers, self.paths):
            writer.close()
            if tf.io.gfile.exists(self._temporary(path)):
                tf.io.gfile.remove(self._temporary(path))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is None:
            self.close()
        else:
            self.abort()
