"""The steps of the pretraining-data pipeline, as pure functions of text, options and seed.

Every random draw is keyed by something stable, never by processing order, so
the records are the same whichever runner, worker count or bundle sizes run
them (see `beam_pipeline`):
- a document's key is the hash of its text plus its occurrence number among
  identical documents (`document_keys`);
- documents fall into `num_buckets` random buckets by a hash of key and seed;
  a NotNext B segment comes from another document of the same bucket;
- the instances of each of the `dupe_factor` copies of a document draw from
  `random.Random(f"{seed}:{key}:{copy}")`, which also draws each record's
  sort key: records are sorted by it within a shard and the shard is the sort
  key modulo the number of shards, a global shuffle that is a function of the
  records alone.

Example:
>>> keys = document_keys("ab" * 16, 2)
>>> keys
['abababababababababababababababab:0', 'abababababababababababababababab:1']
>>> 0 <= bucket_of(keys[0], random_seed=1, num_buckets=3) < 3
True
"""

import hashlib
import random
import struct

import numpy as np
import tensorflow as tf

from bert_tf.data import document_reader


class DataLossError(RuntimeError):
    """The runner delivered fewer documents or records to a step than the step before made.

    A fault of the runner, not of the input; the data tool reports it in one line.
    """


def content_hash(sentences):
    """The SHA-256 of a document's sentences (hex, 128 bits): equal text, equal hash."""
    return hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()[:32]


def document_keys(text_hash, count):
    """Keys of the `count` documents whose text hashes to `text_hash`: `<hash>:<occurrence>`."""
    return [f"{text_hash}:{i}" for i in range(count)]


def num_buckets(num_documents, documents_per_bucket):
    """How many random buckets `num_documents` documents fall into (at least one)."""
    return max(1, num_documents // documents_per_bucket)


def bucket_of(key, random_seed, num_buckets):
    """The random bucket of the document `key`: uniform over `range(num_buckets)`."""
    digest = hashlib.sha256(f"{random_seed}:bucket:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % num_buckets


def tokenize_documents(tokenize, documents):
    """Tokenizes documents in one batch (one call of `tokenize`), into packed id documents.

    Args:
      tokenize: a function from tf.string `[N]` to int ids, ragged
        `[N, (words), (pieces)]` (`BertTokenizer.tokenize`, maybe traced).
      documents: list of documents, each a list of sentence strings.

    Returns:
      One packed id document per input document (see `unpack_document`),
      holding the sentences that have pieces; `None` for a document without
      any pieces.
    """
    ids = tokenize(tf.constant([s for d in documents for s in d], tf.string))
    flat = ids.flat_values.numpy().astype(np.int32)
    starts = np.zeros(len(flat), dtype=np.uint8)
    starts[ids.values.row_splits.numpy()[:-1]] = 1  # The first piece of every word.
    # [sentences + 1] piece offsets
    sentence_ends = ids.values.row_splits.numpy()[ids.row_splits.numpy()]
    results, k = [], 0
    for document in documents:
        ends = sentence_ends[k:k + len(document) + 1]
        k += len(document)
        lengths = np.diff(ends)
        lengths = lengths[lengths > 0].astype(np.int32)
        first, last = ends[0], ends[-1]
        results.append((flat[first:last].tobytes(), starts[first:last].tobytes(), lengths.tobytes())
                       if last > first else None)
    return results


def unpack_document(packed):
    """A packed id document → list of `(piece_ids, word_starts)` sentences (`instance_builder`'s
    format).

    Packed documents are three byte strings (int32 piece ids, uint8 word
    starts, int32 sentence lengths): between pipeline stages they cost a
    fraction of what nested lists of ints cost to encode and decode.
    """
    ids, starts, lengths = packed
    ids = np.frombuffer(ids, np.int32).tolist()
    starts = [bool(s) for s in np.frombuffer(starts, np.uint8).tolist()]
    document, first = [], 0
    for length in np.frombuffer(lengths, np.int32).tolist():
        document.append((ids[first:first + length], starts[first:first + length]))
        first += length
    return document


def parts_per_bucket(num_buckets, work_units):
    """How many parts each bucket's records are split into, so that there are `work_units` in
    all."""
    return max(1, -(-work_units // num_buckets))


def bucket_records(documents, builder, serialize, dupe_factor, random_seed, part=0, parts=1):
    """Yields `(sort_key, record)` for every copy of every document of one bucket, or a part of
    them.

    A bucket's records can be made in `parts` parts (on different workers):
    part `p` makes the copies `(document j, copy c)` with
    `(j * dupe_factor + c) % parts == p`. Each copy draws from its own keyed
    `random.Random`, so the records do not depend on `parts`.

    Args:
      documents: the bucket's `(key, packed id_document)` pairs (see
        `unpack_document`), in any order; at least two unless the whole
        corpus has one bucket of one document.
      builder: an `instance_builder.InstanceBuilder`.
      serialize: a `RecordSerializer` (instance → record bytes).
      dupe_factor: copies per document, each with its own draws.
      random_seed: the run's seed.
      part, parts: which part of the bucket's copies to make.

    Raises:
      InputError: if the bucket holds a single document (no other to draw from).
    """
    documents = sorted(((key, unpack_document(packed)) for key, packed in documents),
                       key=lambda kv: kv[0])
    if len(documents) < 2:
        raise document_reader.InputError(f"a NotNext bucket holds {len(documents)} document(s) "
                                         "with WordPieces; NotNext pairs need two: give more "
                                         "documents (separated by a blank line) or raise "
                                         "--documents_per_bucket")
    for index in range(part, len(documents) * dupe_factor, parts):
        j, copy = divmod(index, dupe_factor)
        key, document = documents[j]
        rng = random.Random(f"{random_seed}:{key}:{copy}")

        def random_document():
            k = rng.randrange(len(documents) - 1)
            return documents[k + 1 if k >= j else k][1]

        for instance in builder.build(document, random_document, rng):
            record = serialize(instance)
            yield rng.getrandbits(64), record


def shard_of(sort_key, num_shards):
    """The output shard of a record with `sort_key`."""
    return sort_key % num_shards


def _varint(value):
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field: tag, length, payload."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class RecordSerializer:
    """`TrainingInstance` → `tf.train.Example` bytes, written directly in protobuf's wire format.

    Gives exactly the bytes of `tf.train.Example.SerializeToString(deterministic=True)`
    (features in key order, packed values), several times faster: the varint of
    every id is looked up in a table and the headers of every feature (which
    depend only on its packed length) are cached.

    Example:
    >>> from bert_tf.data.records.instance_builder import TrainingInstance
    >>> serialize = RecordSerializer(max_seq_length=8, max_predictions_per_seq=2, vocab_size=100)
    >>> record = serialize(TrainingInstance([1, 5, 2, 6, 2], [0, 0, 0, 1, 1], [1], [7], False))
    >>> tf.train.Example.FromString(record).features.feature["masked_lm_ids"].int64_list.value[:]
    [7, 0]
    """

    _INT64_LIST, _FLOAT_LIST = 3, 2  # Field numbers of `tf.train.Feature`.

    def __init__(self, max_seq_length, max_predictions_per_seq, vocab_size):
        self.max_seq_length, self.max_predictions_per_seq = max_seq_length, max_predictions_per_seq
        self._varints = [_varint(i) for i in range(max(vocab_size, max_seq_length, 2))]
        self._headers = {}
        self._one = struct.pack("<f", 1.0)

    def _entry(self, name, list_field, packed):
        """One map entry of `Features.feature`: the key, and a Feature holding one packed list."""
        header = self._headers.get((name, len(packed)))
        if header is None:
            # Everything but the packed values; the values are its last bytes. An empty list
            # has no values field at all (protobuf leaves out empty packed fields).
            values = _field(1, packed) if packed else b""
            whole = _field(1, _field(1, name.encode("ascii"))
                           + _field(2, _field(list_field, values)))
            header = self._headers[(name, len(packed))] = whole[:len(whole) - len(packed)]
        return header + packed

    def __call__(self, instance):
        length, num_masked = len(instance.input_ids), len(instance.masked_lm_positions)
        if length > self.max_seq_length or num_masked > self.max_predictions_per_seq:
            raise ValueError(f"instance of {length} tokens / {num_masked} predictions does not fit "
                             f"max_seq_length={self.max_seq_length} / "
                             f"max_predictions_per_seq={self.max_predictions_per_seq}")
        pad = bytes(self.max_seq_length - length)
        pad_masked = bytes(self.max_predictions_per_seq - num_masked)
        varints, int64s = self._varints.__getitem__, self._INT64_LIST
        features = b"".join((self._entry("input_ids", int64s,
                                         b"".join(map(varints, instance.input_ids)) + pad),
                             self._entry("input_mask", int64s, b"\x01" * length + pad),
                             self._entry("masked_lm_ids", int64s,
                                         b"".join(map(varints,
                                                      instance.masked_lm_ids)) + pad_masked),
                             self._entry("masked_lm_positions", int64s,
                                         b"".join(map(varints,
                                                      instance.masked_lm_positions)) + pad_masked),
                             self._entry("masked_lm_weights", self._FLOAT_LIST,
                                         self._one * num_masked + bytes(4 * len(pad_masked))),
                             self._entry("next_sentence_labels", int64s, b"\x01"
                                         if instance.is_random_next else b"\x00"),
                             self._entry("segment_ids", int64s,
                                         b"".join(map(varints, instance.segment_ids)) + pad),))
        return _field(1, features)
