"""tf.data pipeline over pretraining TFRecords (ours or google-research's).

Records carry google-research/bert's features (`input_ids, input_mask,
segment_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights,
next_sentence_labels`; Model Garden's v2 names `input_word_ids` /
`input_type_ids` are accepted too). Batches are the model-input dict:
`input_word_ids, input_mask, input_type_ids` int32 [B, S];
`masked_lm_positions, masked_lm_ids` int32 [B, P]; `masked_lm_weights`
float32 [B, P]; `next_sentence_labels` int32 [B].
"""

import tensorflow as tf

from bert_tf.errors import UserError

# Record feature name -> batch key; first the google-research names, then Model Garden's v2 names.
_RENAMES = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids",
            "input_word_ids": "input_word_ids", "input_type_ids": "input_type_ids"}


class RecordFormatError(UserError, ValueError):
    """A TFRecord does not hold the expected pretraining features."""


def feature_spec(seq_length, max_predictions_per_seq, v2_names=False):
    """google-research's parsing spec (int64 ids, float weights, fixed lengths)."""
    word_ids, type_ids = ("input_word_ids", "input_type_ids") if v2_names else ("input_ids", "segment_ids")
    return {
        word_ids: tf.io.FixedLenFeature([seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([seq_length], tf.int64),
        type_ids: tf.io.FixedLenFeature([seq_length], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def check_record_file(path, seq_length, max_predictions_per_seq):
    """Checks the first record of `path`; returns True if it uses v2 feature names.

    Raises:
      RecordFormatError: naming the file and the missing or mis-shaped feature.
    """
    try:
        record = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    except tf.errors.OpError as error:
        raise RecordFormatError(f"{path}: cannot read TFRecords: {error.message}") from error
    if record is None:
        raise RecordFormatError(f"{path}: file has no records")
    try:
        features = tf.train.Example.FromString(record.numpy()).features.feature
    except Exception as error:  # protobuf's DecodeError has no stable import path.
        raise RecordFormatError(f"{path}: first record is not a tf.train.Example: {error}") from error
    v2_names = "input_word_ids" in features
    for name, spec in feature_spec(seq_length, max_predictions_per_seq, v2_names).items():
        if name not in features:
            raise RecordFormatError(f"{path}: first record has no feature {name!r} (has {sorted(features)})")
        kind = "float_list" if spec.dtype == tf.float32 else "int64_list"
        if features[name].WhichOneof("kind") != kind:
            raise RecordFormatError(f"{path}: feature {name!r} is {features[name].WhichOneof('kind')}, expected {kind}")
        length = len(getattr(features[name], kind).value)
        if length != spec.shape[0]:
            what = ("seq_length" if name in _RENAMES or name == "input_mask" else
                    "max_predictions_per_seq" if name.startswith("masked_lm") else "length")
            raise RecordFormatError(f"{path}: feature {name!r} has {length} values, expected {what}={spec.shape[0]}")
    return v2_names


def to_model_inputs(features, use_next_sentence=True):
    """Maps parsed record features to the model-input dict (int32, labels [B])."""
    batch = {_RENAMES.get(name, name): value for name, value in features.items()}
    batch = {name: (value if value.dtype == tf.float32 else tf.cast(value, tf.int32)) for name, value in batch.items()}
    labels = tf.squeeze(batch["next_sentence_labels"], axis=-1)
    batch["next_sentence_labels"] = labels if use_next_sentence else tf.zeros_like(labels)
    return batch


def _files(input_patterns):
    if isinstance(input_patterns, str):
        input_patterns = input_patterns.split(",")
    files = []
    for pattern in (p.strip() for p in input_patterns if p.strip()):
        matches = tf.io.gfile.glob(pattern)
        if not matches:
            raise RecordFormatError(f"input pattern {pattern!r} matches no file")
        files.extend(matches)
    return sorted(set(files))


def pretraining_dataset(input_patterns, batch_size, seq_length, max_predictions_per_seq, is_training,
                        input_context=None, seed=0, use_next_sentence=True, skip_batches=0,
                        shuffle_buffer_size=10000, cycle_length=8):
    """Batches of pretraining examples from TFRecord files.

    The order is a deterministic function of files, `seed` and the input
    pipeline, so a resumed run can continue with `skip_batches` = number of
    batches this pipeline already produced.

    Args:
      input_patterns: comma-separated globs (str) or a list of globs.
      batch_size: global batch size; each pipeline yields the per-replica share
        when `input_context` is given.
      seq_length: S, the records' `max_seq_length`.
      max_predictions_per_seq: P, the records' `max_predictions_per_seq`.
      is_training: shuffle, repeat forever and drop partial batches; else one
        pass in file order, keeping the last partial batch.
      input_context: optional `tf.distribute.InputContext`; files (or records,
        when there are fewer files than pipelines) are sharded per pipeline.
      seed: shuffling seed (None acts as 0).
      use_next_sentence: False gives all-zero `next_sentence_labels` (MLM only).
      skip_batches: batches to skip at the start (resuming).
      shuffle_buffer_size: records in the shuffle buffer when training.
      cycle_length: files read in parallel.

    Returns:
      A `tf.data.Dataset` of model-input dicts (see the module docstring).

    Raises:
      RecordFormatError: if a pattern matches nothing or a file's first record
        lacks a feature or has the wrong length.

    Example:
    >>> ds = pretraining_dataset("/data/pretrain-*", batch_size=256, seq_length=128,
    ...     max_predictions_per_seq=20, is_training=True)  # doctest: +SKIP
    """
    seed = seed or 0  # None: the default order, still deterministic.
    files = _files(input_patterns)
    v2_names = {check_record_file(f, seq_length, max_predictions_per_seq) for f in files}
    if len(v2_names) > 1:
        raise RecordFormatError(f"{input_patterns}: files mix google-research and v2 feature names")
    spec = feature_spec(seq_length, max_predictions_per_seq, v2_names.pop())
    num_pipelines, pipeline_id = 1, 0
    if input_context is not None:
        num_pipelines, pipeline_id = input_context.num_input_pipelines, input_context.input_pipeline_id
        batch_size = input_context.get_per_replica_batch_size(batch_size)

    dataset = tf.data.Dataset.from_tensor_slices(files)
    shard_files = len(files) >= num_pipelines
    if shard_files:
        dataset = dataset.shard(num_pipelines, pipeline_id)
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()
    dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=cycle_length if is_training else 1,
                                 num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if not shard_files:
        dataset = dataset.shard(num_pipelines, pipeline_id)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed + pipeline_id)
    dataset = dataset.batch(batch_size, drop_remainder=is_training)
    if skip_batches:
        dataset = dataset.skip(skip_batches)
    dataset = dataset.map(
        lambda records: to_model_inputs(tf.io.parse_example(records, spec), use_next_sentence),
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)
