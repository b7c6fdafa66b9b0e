"""Several pretraining sequences in one row: `--max_sequences_per_pack` (Krell et al. 2021).

Records made as google-research makes them are not full (on the shipped corpus 8% of the
slots are padding at 128, 30% at 512): every padded slot costs a full slot of compute under
static shapes (XLA, TPU). Krell et al., "Efficient Sequence Packing without
Cross-contamination" (2021), put several sequences in one row instead, and keep the model's
result per sequence unchanged: attention is block-diagonal (a token attends only to its
own sequence), positions restart at 0 for each sequence, and each sequence keeps its own
[CLS] for next-sentence prediction and its own masked positions.

The sequences are the very instances of the unpacked records (same seed, same draws, same
global order): packing runs where a shard is written, on its records in their shuffled
order, `buffer_size` at a time. Each buffer is packed best-fit-decreasing (longest first,
each into the open row whose free space fits it most tightly, a new row when none fits)
under three limits: `max_seq_length` tokens, `max_predictions_per_seq` masked predictions
and `max_sequences_per_pack` sequences per row. The rows of a buffer are written in the
order of their first sequence, so the file stays shuffled; inside a row, sequences keep
their order of arrival. The rows are a function of the shard's records alone, so any
runner and worker count still write the same bytes.

`max_predictions_per_seq` stays the size of the masked-LM features of a *row* (so a
model's P does not change): a sequence joins a row only if its predictions still fit, and
with `max_predictions_per_seq >= masked_lm_prob * max_seq_length` (google-research's
settings: 20 at 128, 76-80 at 512) that limit almost never binds (`pack_rows` counts it).

Packed record features (google-research names, plus four):
- `input_ids`, `segment_ids` [S]: the sequences one after the other, then padding;
- `input_mask` [S]: the sequence number 1..k of each token (0 at padding), not 1;
- `position_ids` [S]: each sequence's positions, restarting at 0 (0 at padding);
- `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights` [P]: every sequence's
  predictions, positions absolute in the row;
- `next_sentence_positions` [K]: each sequence's [CLS]; `next_sentence_labels` [K];
  `next_sentence_weights` [K] float: 1 for a sequence, 0 for an empty slot.
"""

import collections

import tensorflow as tf

from bert_tf.data.records.pretraining_records import RecordSerializer, _field

# Records packed at once: 0.04% more rows than a whole shard at once on the shipped corpus
# (docs/design.md, "Packed records"); memory: one buffer of parsed records.
PACKING_BUFFER = 4096
# The fewest tokens of an instance ([CLS] a [SEP] b [SEP]): more sequences than
# max_seq_length // MIN_SEQUENCE_LENGTH never fit in one row.
MIN_SEQUENCE_LENGTH = 5
PACKED_FEATURES = ("position_ids", "next_sentence_positions", "next_sentence_weights")

Sequence = collections.namedtuple("Sequence", ["input_ids", "segment_ids", "masked_lm_positions",
                                               "masked_lm_ids", "next_sentence_label"])


def max_sequences_limit(max_seq_length):
    """The most sequences a row of `max_seq_length` tokens can hold."""
    return max_seq_length // MIN_SEQUENCE_LENGTH


def parse_records(records, max_seq_length, max_predictions_per_seq):
    """google-research pretraining records (bytes) → their `Sequence`s, padding removed.

    Parsed together by `tf.io.parse_example`, then cut to each sequence's length.
    """
    if not records:
        return []
    ints = lambda size: tf.io.FixedLenFeature([size], tf.int64)  # noqa: E731
    spec = {"input_ids": ints(max_seq_length), "input_mask": ints(max_seq_length),
            "segment_ids": ints(max_seq_length),
            "masked_lm_positions": ints(max_predictions_per_seq),
            "masked_lm_ids": ints(max_predictions_per_seq), "next_sentence_labels": ints(1),
            "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32)}
    features = {name: value.numpy() for name, value in tf.io.parse_example(records, spec).items()}
    lengths = features["input_mask"].sum(axis=1).tolist()
    masked = (features["masked_lm_weights"] > 0).sum(axis=1).tolist()
    columns = [features[name].tolist() for name in ("input_ids", "segment_ids",
                                                    "masked_lm_positions", "masked_lm_ids",
                                                    "next_sentence_labels")]
    return [Sequence(ids[:n], segments[:n], positions[:m], masked_ids[:m], label[0])
            for ids, segments, positions, masked_ids, label, n, m in zip(*columns, lengths, masked)]


class _Row:
    __slots__ = ("members", "free", "predictions")

    def __init__(self, free):
        self.members, self.free, self.predictions = [], free, 0


def pack_rows(lengths, predictions, max_seq_length, max_predictions_per_seq,
              max_sequences_per_pack):
    """Groups sequences into rows, best-fit-decreasing; returns lists of indices.

    Args:
      lengths, predictions: tokens and masked predictions of each sequence (each within
        the row's limits).
      max_seq_length, max_predictions_per_seq, max_sequences_per_pack: a row's limits.

    Returns:
      A list of rows, each the ascending indices of its sequences; rows in the order of
      their first index.

    Example:
    >>> pack_rows([60, 30, 50, 20], [9, 4, 7, 3], 80, 20, 3)
    [[0, 3], [1, 2]]
    """
    open_rows = [[] for _ in range(max_seq_length + 1)]  # by free tokens, in opening order
    rows = []
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        length, count = lengths[i], predictions[i]
        row = None
        for free in range(length, max_seq_length + 1):
            row = next((r for r in open_rows[free] if r.predictions
                        + count <= max_predictions_per_seq), None)
            if row is not None:
                open_rows[free].remove(row)
                break
        if row is None:
            row = _Row(max_seq_length)
            rows.append(row)
        row.members.append(i)
        row.free -= length
        row.predictions += count
        if len(row.members) < max_sequences_per_pack and row.free >= MIN_SEQUENCE_LENGTH:
            open_rows[row.free].append(row)
    packed = [sorted(row.members) for row in rows]
    packed.sort(key=lambda members: members[0])
    return packed


class PackedRecordSerializer(RecordSerializer):
    """A row of `Sequence`s → packed `tf.train.Example` bytes (see the module docstring).

    The bytes of `tf.train.Example.SerializeToString(deterministic=True)` (features in key
    order), written directly as `RecordSerializer` writes unpacked ones.
    """

    def __init__(self, max_seq_length, max_predictions_per_seq, max_sequences_per_pack, vocab_size):
        super().__init__(max_seq_length, max_predictions_per_seq, vocab_size)
        self.max_sequences_per_pack = max_sequences_per_pack
        # Values below 128 are their own one-byte varints (segment ids 0 and 1);
        # positions 0..n-1 are a prefix of one precomputed string.
        self._positions = b"".join(self._varints[:max_seq_length])

    def __call__(self, sequences):
        length = sum(len(s.input_ids) for s in sequences)
        num_masked = sum(len(s.masked_lm_positions) for s in sequences)
        if (length > self.max_seq_length or num_masked > self.max_predictions_per_seq
                or len(sequences) > self.max_sequences_per_pack):
            raise ValueError(f"a row of {len(sequences)} sequences, {length} tokens, {num_masked} "
                             "predictions does not fit "
                             f"max_sequences_per_pack={self.max_sequences_per_pack}, "
                             f"max_seq_length={self.max_seq_length}, "
                             f"max_predictions_per_seq={self.max_predictions_per_seq}")
        varint = self._varints.__getitem__
        ids, masked_positions, masked_ids, cls_positions, labels = [], [], [], [], []
        mask, segments, positions = [], [], []
        for number, sequence in enumerate(sequences, 1):
            start, size = len(ids), len(sequence.input_ids)
            ids.extend(sequence.input_ids)
            segments.append(bytes(sequence.segment_ids))
            mask.append(self._varints[number] * size)
            positions.append(self._positions[:size if size <= 128 else 2 * size - 128])
            masked_positions.extend(start + p for p in sequence.masked_lm_positions)
            masked_ids.extend(sequence.masked_lm_ids)
            cls_positions.append(start)
            labels.append(sequence.next_sentence_label)
        pad = bytes(self.max_seq_length - length)
        pad_masked = bytes(self.max_predictions_per_seq - num_masked)
        pad_sequences = bytes(self.max_sequences_per_pack - len(sequences))
        ints = lambda values: b"".join(map(varint, values))  # noqa: E731
        int64s, floats = self._INT64_LIST, self._FLOAT_LIST
        features = b"".join((self._entry("input_ids", int64s, ints(ids) + pad),
                             self._entry("input_mask", int64s, b"".join(mask) + pad),
                             self._entry("masked_lm_ids", int64s, ints(masked_ids) + pad_masked),
                             self._entry("masked_lm_positions", int64s,
                                         ints(masked_positions) + pad_masked),
                             self._entry("masked_lm_weights", floats, self._one * num_masked
                                         + bytes(4 * len(pad_masked))),
                             self._entry("next_sentence_labels", int64s,
                                         ints(labels) + pad_sequences),
                             self._entry("next_sentence_positions", int64s,
                                         ints(cls_positions) + pad_sequences),
                             self._entry("next_sentence_weights", floats, self._one * len(sequences)
                                         + bytes(4 * len(pad_sequences))),
                             self._entry("position_ids", int64s, b"".join(positions) + pad),
                             self._entry("segment_ids", int64s, b"".join(segments) + pad),))
        return _field(1, features)


class PackedRecords:
    """Iterates the packed rows (bytes) of a stream of unpacked records (bytes).

    After the iteration, `sequences` and `rows` say how many of each it held.

    Args:
      records: google-research records, in the order to keep (a shard's shuffled order).
      max_seq_length, max_predictions_per_seq, max_sequences_per_pack, vocab_size: the
        records' and the rows' sizes.
      buffer_size: records packed at once.
    """

    def __init__(self, records, max_seq_length, max_predictions_per_seq, max_sequences_per_pack,
                 vocab_size, buffer_size=PACKING_BUFFER):
        self._records, self._buffer_size = records, buffer_size
        self._limits = (max_seq_length, max_predictions_per_seq, max_sequences_per_pack)
        self._sizes = (max_seq_length, max_predictions_per_seq)
        self._serialize = PackedRecordSerializer(max_seq_length, max_predictions_per_seq,
                                                 max_sequences_per_pack, vocab_size)
        self.sequences = self.rows = 0

    def __iter__(self):
        buffer = []
        for record in self._records:
            buffer.append(record)
            if len(buffer) == self._buffer_size:
                yield from self._pack(parse_records(buffer, *self._sizes))
                buffer = []
        yield from self._pack(parse_records(buffer, *self._sizes))

    def _pack(self, sequences):
        lengths = [len(s.input_ids) for s in sequences]
        predictions = [len(s.masked_lm_positions) for s in sequences]
        for members in pack_rows(lengths, predictions, *self._limits):
            self.sequences += len(members)
            self.rows += 1
            yield self._serialize([sequences[i] for i in members])
