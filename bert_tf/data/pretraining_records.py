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

import numpy as np
import tensorflow as tf

from bert_tf.data import tfrecord_writer


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
    digest = hashlib.sha256(f"{random_seed}:bucket:{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") % num_buckets


def tokenize_documents(tokenize, documents):
    """Tokenizes documents in one batch.

    Args:
      tokenize: a function from tf.string `[N]` to int ids, ragged
        `[N, (words), (pieces)]` (`BertTokenizer.tokenize`, maybe traced).
      documents: list of documents, each a list of sentence strings.

    Returns:
      One id document per input document: a list of `(piece_ids, word_starts)`
      (the `instance_builder` format) holding the sentences that have pieces;
      a document without any pieces comes back as `[]`.
    """
    ids = tokenize(tf.constant([s for d in documents for s in d], tf.string))
    flat = ids.flat_values.numpy().tolist()
    piece_splits = ids.values.row_splits.numpy()
    word_splits = ids.row_splits.numpy()
    results, k = [], 0
    for document in documents:
        result = []
        for _ in document:
            first, last = piece_splits[word_splits[k]], piece_splits[word_splits[k + 1]]
            if last > first:
                starts = np.zeros(last - first, dtype=bool)
                starts[piece_splits[word_splits[k]:word_splits[k + 1]] - first] = True
                result.append((flat[first:last], starts.tolist()))
            k += 1
        results.append(result)
    return results


def bucket_records(documents, builder, dupe_factor, random_seed, max_seq_length, max_predictions_per_seq):
    """Yields `(sort_key, record)` for every copy of every document of one bucket.

    Args:
      documents: the bucket's `(key, id_document)` pairs, in any order; at
        least two unless the whole corpus has one bucket of one document.
      builder: an `instance_builder.InstanceBuilder`.
      dupe_factor: copies per document, each with its own draws.
      random_seed: the run's seed.
      max_seq_length, max_predictions_per_seq: the record's padded sizes.

    Raises:
      ValueError: if the bucket holds a single document (no other to draw from).
    """
    documents = sorted(documents, key=lambda kv: kv[0])
    if len(documents) < 2:
        raise ValueError(f"a NotNext bucket holds {len(documents)} document(s); NotNext pairs need two: "
                         "raise --documents_per_bucket")
    for j, (key, document) in enumerate(documents):
        for copy in range(dupe_factor):
            rng = random.Random(f"{random_seed}:{key}:{copy}")

            def random_document():
                k = rng.randrange(len(documents) - 1)
                return documents[k + 1 if k >= j else k][1]

            for instance in builder.build(document, random_document, rng):
                record = tfrecord_writer.serialize_instance(instance, max_seq_length, max_predictions_per_seq)
                yield rng.getrandbits(64), record


def shard_of(sort_key, num_shards):
    """The output shard of a record with `sort_key`."""
    return sort_key % num_shards
