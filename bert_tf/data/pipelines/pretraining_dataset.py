"""tf.data pipeline over pretraining TFRecords (ours or google-research's).

Records carry google-research/bert's features (`input_ids, input_mask,
segment_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights,
next_sentence_labels`; Model Garden's v2 names `input_word_ids` /
`input_type_ids` are accepted too). Batches are the model-input dict:
`input_word_ids, input_mask, input_type_ids` int32 [B, S];
`masked_lm_positions, masked_lm_ids` int32 [B, P]; `masked_lm_weights`
float32 [B, P]; `next_sentence_labels` int32 [B].

Packed records (`create_pretraining_data --max_sequences_per_pack=K`, see
`data.records.sequence_packing`) are recognised by their `next_sentence_positions`
feature; their batches add `input_position_ids` int32 [B, S] and
`next_sentence_positions` int32 / `next_sentence_weights` float32 [B, K], their
`next_sentence_labels` are [B, K], and `input_mask` holds each token's sequence
number 1..k (0 at padding).

Training reads each record exactly once per epoch (as google-research's
`input_fn_builder`: file order shuffled per epoch, at most one reader per file,
records mixed in a shuffle buffer), then starts the next epoch.
"""

import collections
import functools

import numpy as np
import tensorflow as tf

from bert_tf.data.document_reader import InputError, expand_input_patterns

# Record feature name -> batch key; first the google-research names, then Model Garden's v2 names.
_RENAMES = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids",
            "input_word_ids": "input_word_ids", "input_type_ids": "input_type_ids"}
_SCAN_BATCH = 1024  # Records per step of the up-front scan.
# The features packed records add (`data.records.sequence_packing`), [K] each but `position_ids`.
_PACKED_FEATURES = {"position_ids": tf.int64, "next_sentence_positions": tf.int64,
                    "next_sentence_weights": tf.float32}


class RecordLayout(collections.namedtuple("RecordLayout", ["v2_names", "sequences_per_row"])):
    """What a set of records holds: Model Garden v2 feature names or google-research's, and
    `sequences_per_row` K of packed records (None: one sequence per record)."""

    @property
    def packed(self):
        return self.sequences_per_row is not None


class RecordFormatError(InputError):
    """A TFRecord file cannot be read or does not hold the expected pretraining features."""


def feature_spec(seq_length, max_predictions_per_seq, v2_names=False, sequences_per_row=None):
    """google-research's parsing spec (int64 ids, float weights, fixed lengths); with
    `sequences_per_row` K, that of packed records."""
    word_ids, type_ids = ("input_word_ids", "input_type_ids") if v2_names else ("input_ids",
                                                                                "segment_ids")
    spec = {
        word_ids: tf.io.FixedLenFeature([seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([seq_length], tf.int64),
        type_ids: tf.io.FixedLenFeature([seq_length], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([sequences_per_row or 1], tf.int64),
    }
    if sequences_per_row is not None:
        spec.update({name: tf.io.FixedLenFeature([seq_length if name == "position_ids"
                                                  else sequences_per_row], dtype)
                     for name, dtype in _PACKED_FEATURES.items()})
    return spec


def _check_example(path, number, record, seq_length, max_predictions_per_seq):
    """Checks one serialized record's features; returns its `RecordLayout`."""
    where = f"{path}: record {number}"
    try:
        features = tf.train.Example.FromString(record).features.feature
    except Exception as error:  # protobuf's DecodeError has no stable import path.
        raise RecordFormatError(f"{where} is not a tf.train.Example: {error}") from error
    v2_names = "input_word_ids" in features
    packed = "next_sentence_positions" in features
    sequences_per_row = None
    if packed:
        sequences_per_row = len(features["next_sentence_positions"].int64_list.value)
    for name, spec in feature_spec(seq_length, max_predictions_per_seq, v2_names,
                                   sequences_per_row).items():
        if name not in features:
            raise RecordFormatError(f"{where} has no feature {name!r} (has {sorted(features)})")
        kind = "float_list" if spec.dtype == tf.float32 else "int64_list"
        if features[name].WhichOneof("kind") != kind:
            raise RecordFormatError(f"{where}: feature {name!r} is "
                                    f"{features[name].WhichOneof('kind')}, expected {kind}")
        length = len(getattr(features[name], kind).value)
        if length != spec.shape[0]:
            what = ("--max_seq_length" if name in _RENAMES or name in ("input_mask", "position_ids")
                    else "--max_predictions_per_seq" if name.startswith("masked_lm")
                    else "K (next_sentence_positions)" if packed else "length")
            raise RecordFormatError(f"{where}: feature {name!r} has {length} values, expected "
                                    f"{what}={spec.shape[0]}")
    return RecordLayout(v2_names, sequences_per_row)


def _first_bad_record(path, start, seq_length, max_predictions_per_seq):
    """Reads `path` record by record from `start`; raises RecordFormatError at the first bad one."""
    number = start - 1
    try:
        records = tf.data.TFRecordDataset(path).skip(start).as_numpy_iterator()
        for number, record in enumerate(records, start):
            _check_example(path, number, record, seq_length, max_predictions_per_seq)
    except tf.errors.OpError as error:
        raise RecordFormatError(f"{path}: cannot read record {number + 1} (file truncated or "
                                f"corrupt?): {_first_line(error)}") from None


def _first_line(error):
    """The reader's own words: the first line, without TF's `{{function_node ...}}` prefix."""
    return error.message.split("\n")[0].split("}} ")[-1]


def _scan_batches(path, spec, names):
    """The features `names` of every record of `path`, `_SCAN_BATCH` records at a time."""
    return tf.data.TFRecordDataset(path, buffer_size=1 << 22).batch(_SCAN_BATCH).map(
        lambda records: {k: v for k, v in tf.io.parse_example(records, spec).items() if k in names})


@functools.lru_cache(maxsize=1024)
def _scan_file(path, unused_size, unused_mtime, seq_length, max_predictions_per_seq, vocab_size):
    """Reads and parses every record of `path` once; returns (`RecordLayout`, number of records).

    Cached per (path, size, modification time): a run builds its pipelines several times.
    """
    try:
        first = next(tf.data.TFRecordDataset(path).take(1).as_numpy_iterator(), None)
    except tf.errors.OpError as error:
        raise RecordFormatError(f"{path}: cannot read TFRecords: {_first_line(error)}") from None
    if first is None:
        raise RecordFormatError(f"{path}: file has no records")
    layout = _check_example(path, 0, first, seq_length, max_predictions_per_seq)
    word_ids = "input_word_ids" if layout.v2_names else "input_ids"
    spec = feature_spec(seq_length, max_predictions_per_seq, *layout)
    count, batches = 0, iter(_scan_batches(path, spec,
                                           (word_ids, "masked_lm_ids")).as_numpy_iterator())
    while True:
        try:
            batch = next(batches, None)
        except tf.errors.OpError as error:
            _first_bad_record(path, count, seq_length, max_predictions_per_seq)
            raise RecordFormatError(f"{path}: records {count}-{count + _SCAN_BATCH - 1}: "
                                    f"{_first_line(error)}") from None
        if batch is None:
            return layout, count
        for name, ids in batch.items():
            rows = np.nonzero(((ids < 0) | (ids >= (vocab_size or np.inf))).any(axis=1))[0]
            if len(rows):
                raise RecordFormatError(f"{path}: record {count + rows[0]}: feature {name!r} holds "
                                        f"an id outside the vocabulary [0, {vocab_size}) "
                                        f"({ids[rows[0]].min()}..{ids[rows[0]].max()}); were the "
                                        "records made with another vocab?")
        count += len(batch[word_ids])


def check_record_files(files, seq_length, max_predictions_per_seq, vocab_size=None):
    """Reads every record of `files` once, up front; returns (`RecordLayout`, records per file).

    Checked: each file is a readable TFRecord file to its end (not truncated, checksums
    intact), every record parses with the expected features and lengths, and ids lie in
    [0, vocab_size) when `vocab_size` is given. Reading is cached per file version, so a
    run that builds its pipeline several times reads the files once.

    Raises:
      RecordFormatError: naming the file, the record number (from 0) and what is wrong.
    """
    scans = [_scan_file(path, *_version(path), seq_length, max_predictions_per_seq, vocab_size)
             for path in files]
    if len({layout.v2_names for layout, _ in scans}) > 1:
        raise RecordFormatError(f"{files}: files mix google-research and v2 feature names")
    kind = lambda k: f"rows of {k} sequences" if k else "one sequence per record"  # noqa: E731
    for path, (layout, _) in zip(files, scans):
        if layout.sequences_per_row != scans[0][0].sequences_per_row:
            raise RecordFormatError(f"{files[0]} holds {kind(scans[0][0].sequences_per_row)} but "
                                    f"{path} {kind(layout.sequences_per_row)} (made with different "
                                    "--max_sequences_per_pack): read files of one kind")
    return scans[0][0], [count for _, count in scans]


def _version(path):
    stat = tf.io.gfile.stat(path)
    return stat.length, stat.mtime_nsec


def to_model_inputs(features, use_next_sentence=True):
    """Maps parsed record features to the model-input dict (int32, labels [B]; packed
    records: `input_position_ids`, labels [B, K])."""
    batch = {_RENAMES.get(name, name): value for name, value in features.items()}
    batch = {name: (value if value.dtype == tf.float32 else tf.cast(value, tf.int32))
             for name, value in batch.items()}
    labels = batch["next_sentence_labels"]
    if "position_ids" in batch:
        batch["input_position_ids"] = batch.pop("position_ids")
    else:
        labels = tf.squeeze(labels, axis=-1)
    batch["next_sentence_labels"] = labels if use_next_sentence else tf.zeros_like(labels)
    return batch


def input_pipeline(input_context, batch_size):
    """(number of pipelines, this pipeline's id, its batch size) for an optional `InputContext`."""
    if input_context is None:
        return 1, 0, batch_size
    return (input_context.num_input_pipelines, input_context.input_pipeline_id,
            input_context.get_per_replica_batch_size(batch_size))


def _epoch_records(files, counts, num_pipelines, pipeline_id, is_training, seed, cycle_length):
    """One epoch of this pipeline's serialized records.

    Files are sharded across pipelines when that gives every pipeline the same number of
    records; else every pipeline reads all files (in the same order: the file shuffle uses
    `seed` alone) and keeps every `num_pipelines`-th record. Either way the pipelines together
    see each record once. At most `cycle_length` files are read at once, each file once.
    """
    shares = [sum(counts[i::num_pipelines]) for i in range(num_pipelines)]
    shard_files = len(files) >= num_pipelines and len(set(shares)) == 1
    if shard_files:
        files = files[pipeline_id::num_pipelines]
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed)  # A new file order every epoch.
    dataset = dataset.interleave(
        lambda path: tf.data.TFRecordDataset(path, buffer_size=1 << 20),
        cycle_length=min(cycle_length, len(files)) if is_training else 1,
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset if shard_files else dataset.shard(num_pipelines, pipeline_id)


def pretraining_dataset(input_patterns, batch_size, seq_length, max_predictions_per_seq,
                        is_training, input_context=None, seed=0, use_next_sentence=True,
                        skip_batches=0, shuffle_buffer_size=10000, cycle_length=8, vocab_size=None):
    """Batches of pretraining examples from TFRecord files.

    Training yields epochs that each hold every record once, shuffled by file
    and by a `shuffle_buffer_size`-record buffer. The order is a deterministic
    function of files, `seed` and the input pipeline, so a resumed run continues
    with `skip_batches` = batches this pipeline produced. Every record is read
    and checked once up front (`check_record_files`).

    Args:
      input_patterns: comma-separated globs (str) or a list of globs.
      batch_size: global batch size; each pipeline yields the per-replica share
        when `input_context` is given.
      seq_length, max_predictions_per_seq: S and P of the records.
      is_training: shuffle, repeat forever and drop partial batches; else one
        pass in file order, keeping the last partial batch.
      input_context: optional `tf.distribute.InputContext`; files or records
        are sharded so that the pipelines together read each record once.
      seed, skip_batches: shuffling seed (None acts as 0); batches to skip.
      use_next_sentence: False gives all-zero `next_sentence_labels` (MLM only).
      shuffle_buffer_size: records in the shuffle buffer when training.
      cycle_length: the most files read in parallel.
      vocab_size: if given, ids must lie in [0, vocab_size).

    Returns:
      A `tf.data.Dataset` of model-input dicts (see the module docstring; packed records
      give packed rows).

    Raises:
      InputError: if a pattern matches nothing.
      RecordFormatError: naming file and record: a truncated or corrupt file,
        a missing feature, a wrong length, an id outside the vocabulary.

    Example:
    >>> ds = pretraining_dataset("/data/pretrain-*", batch_size=256, seq_length=128,
    ...     max_predictions_per_seq=20, is_training=True)  # doctest: +SKIP
    """
    seed = seed or 0  # None: the default order, still deterministic.
    files = expand_input_patterns(input_patterns)
    layout, counts = check_record_files(files, seq_length, max_predictions_per_seq, vocab_size)
    spec = feature_spec(seq_length, max_predictions_per_seq, *layout)
    num_pipelines, pipeline_id, batch_size = input_pipeline(input_context, batch_size)
    dataset = _epoch_records(files, counts, num_pipelines, pipeline_id, is_training, seed,
                             cycle_length)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed + pipeline_id).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=is_training)
    if skip_batches:
        dataset = dataset.skip(skip_batches)
    dataset = dataset.map(
        lambda records: to_model_inputs(tf.io.parse_example(records, spec), use_next_sentence),
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)
