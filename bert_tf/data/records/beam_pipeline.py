"""The pretraining-data pipeline on Apache Beam: text files in, TFRecord shards out.

    files ─ read documents (counted: the number of buckets) ─ group by text hash
      ─ document keys ─ tokenize in batches ─ random NotNext buckets (each sent to
      its parts) ─ records of a part (dupe copies, masks), one sorted run file per
      shard ─ group run names by shard ─ merge a shard's runs into its output file
      ─ the counts of every step, summed into `<runs_dir>/counts.json`

A bucket's records are made in parts, on different workers, when there are
fewer buckets than work units (a small corpus has one bucket): see
`pretraining_records.bucket_records`. Records go from the part that makes them
to their shard through run files in `runs_dir` (`sorted_runs`), never through
the runner: memory holds one part's records, whatever the corpus size.

Each step is a function of `pretraining_records`; the pipeline only moves data
between them. Beam runs it in-process (DirectRunner), on a Dask cluster
(DaskRunner) or on Dataflow, Flink or Spark unchanged; the records are the same
on all of them. The counts travel as data, not as Beam metrics (the DaskRunner has
none), and every step leads into the last one (the only one the DaskRunner computes).
"""

import collections
import dataclasses
import json
import os

from bert_tf.data import beam_runner, document_reader
from bert_tf.data.records import (
    pretraining_records,
    record_options,
    sequence_packing,
    sorted_runs,
    tfrecord_writer,
)
from bert_tf.tokenization import vocab as vocab_lib

beam = beam_runner.import_beam()

COUNTERS = ("documents", "empty_documents", "sentences", "instances")
# Counted on both sides of the grouping steps, so that a runner that drops data is caught.
_CHECK_COUNTERS = ("documents_read", "records_written", "packed_rows")
COUNTS_FILE = "counts.json"


class _ReadDocuments(beam.DoFn):
    """A file's documents as `(text_hash, sentences)` (one file is read by one worker)."""

    def __init__(self, max_document_sentences):
        self._max_document_sentences = max_document_sentences

    def process(self, path):
        for document in document_reader.read_documents([path], self._max_document_sentences):
            yield pretraining_records.content_hash(document.sentences), document.sentences


def _keyed(group):
    """`(text_hash, [sentences, ...])` → `(key, sentences)` per occurrence (identical texts)."""
    text_hash, documents = group
    documents = list(documents)
    return zip(pretraining_records.document_keys(text_hash, len(documents)), documents)


_TOKENIZERS = {}


def _tokenize_function(vocab_file, lower_case):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from bert_tf.tokenization.bert_tokenizer import BertTokenizer  # pylint: disable=import-outside-toplevel

    tokenizer = BertTokenizer(vocab_file, lower_case=lower_case)
    # autograph=False: the tokenizer has no Python control flow on tensors; autograph's
    # conversion alone took 1.1 s of every worker's start-up.
    return tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)],
                       autograph=False)


class _Tokenize(beam.DoFn):
    """A batch of `(key, sentences)` → `(counts, [(key, packed id_document), ...])` for documents
    with pieces.

    One output per batch, its counts beside it: the DaskRunner mixes a DoFn's tagged outputs
    into one collection, so the counts cannot leave as an output of their own.
    """

    def __init__(self, vocab_file, lower_case):
        self._vocab_file, self._lower_case = vocab_file, lower_case

    def setup(self):
        # Once per process: the DaskRunner sets a DoFn up for every bag partition, and a
        # tokenizer's set-up (its first trace) takes about a second.
        key = (self._vocab_file, self._lower_case)
        if key not in _TOKENIZERS:
            _TOKENIZERS[key] = _tokenize_function(*key)
        self._tokenize = _TOKENIZERS[key]

    def process(self, batch):
        id_documents = pretraining_records.tokenize_documents(self._tokenize,
                                                              [sentences for _, sentences in batch])
        kept = [(key, id_document) for (key, _), id_document in zip(batch, id_documents)
                if id_document is not None]
        # int32 sentence lengths
        counts = {"documents": len(kept), "empty_documents": len(batch) - len(kept),
                  "sentences": sum(len(id_document[2]) // 4 for _, id_document in kept)}
        yield counts, kept


class _BucketRecords(beam.DoFn):
    """`((bucket, part, parts), [(key, id_document), ...])` → `(shard, (run file, records))` per
    shard it has records for.

    The run's name depends only on (bucket, part, shard), so a retried part overwrites its runs.
    """

    def __init__(self, options, num_shards, runs_dir):
        self._options, self._num_shards, self._runs_dir = options, num_shards, runs_dir

    def setup(self):
        options = self._options
        self._builder = record_options.instance_builder(options,
                                                        vocab_lib.load_vocab(options.vocab_file))
        self._serialize = pretraining_records.RecordSerializer(
            options.max_seq_length, options.max_predictions_per_seq, self._builder.vocab_size)

    def process(self, bucket):
        (bucket_index, part, parts), documents = bucket
        shards = [[] for _ in range(self._num_shards)]
        for sort_key, record in pretraining_records.bucket_records(documents, self._builder,
                                                                   self._serialize,
                                                                   self._options.dupe_factor,
                                                                   self._options.random_seed, part,
                                                                   parts):
            shards[pretraining_records.shard_of(sort_key, self._num_shards)].append((sort_key,
                                                                                     record))
        for index, keyed_records in enumerate(shards):
            if keyed_records:
                run = (f"{self._runs_dir}/shard-{index:05d}/"
                       f"bucket-{bucket_index:06d}-part-{part:03d}")
                sorted_runs.write_run(run, keyed_records)
                yield index, (run, len(keyed_records))


def _to_parts(document, random_seed, num_buckets, work_units):
    """`(key, id_document)` → `((bucket, part, parts), (key, id_document))` for each part of its
    bucket."""
    bucket = pretraining_records.bucket_of(document[0], random_seed, num_buckets)
    parts = pretraining_records.parts_per_bucket(num_buckets, work_units)
    return [((bucket, part, parts), document) for part in range(parts)]


def _work_units(pipeline):
    """Record-making work units that keep every worker busy: 8 per DirectRunner worker.

    Only speed depends on it, never the records. Dask gets one per bag partition (a small
    corpus, one bucket, then still has its records made by every worker); other distributed
    runners one per bucket (their corpora have many buckets).
    """
    if beam_runner.is_dask(pipeline.options):
        return beam_runner.dask_partitions(pipeline.options, 1) or 1
    options = pipeline.options.get_all_options()
    # Beam: 0 workers = one per core.
    workers = options.get("direct_num_workers", 1) or os.cpu_count()
    if workers <= 1 or options.get("runner") not in (None, "DirectRunner"):
        return 1
    return 8 * workers


def _write(shard, paths, runs_dir):
    """Merges a shard's runs into its output file; returns `{"records_written": n}`.

    The runs stay until the launcher removes `runs_dir` after the pipeline, so a retried
    write (distributed runners retry work) still finds them.
    """
    index, runs = shard
    runs = sorted(run for run, _ in (r for r in runs if r is not None))
    records = sorted_runs.merge_runs(runs, f"{runs_dir}/shard-{index:05d}/merge")
    return {"records_written": tfrecord_writer.write_shard(paths[index], records)}


def _sum_counts(counts):
    """Sums dicts of counts (a `CombineGlobally` function: its own outputs come back as inputs)."""
    total = collections.Counter()
    for c in counts:
        total.update(c)
    return dict(total)


def _write_counts(counts, path):
    """Writes the summed counts as JSON (the launcher reads them after the run)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    with tf.io.gfile.GFile(path, "w") as f:
        json.dump(counts, f, sort_keys=True)


def _write_packed(shard, paths, runs_dir, options):
    """`_write` for `options.max_sequences_per_pack > 1`: the shard's records, in their order,
    packed into rows of several sequences (`sequence_packing`); returns the counts."""
    index, runs = shard
    runs = sorted(run for run, _ in (r for r in runs if r is not None))
    records = sorted_runs.merge_runs(runs, f"{runs_dir}/shard-{index:05d}/merge")
    packed = sequence_packing.PackedRecords(records, options.max_seq_length,
                                            options.max_predictions_per_seq,
                                            options.max_sequences_per_pack,
                                            len(vocab_lib.load_vocab(options.vocab_file)))
    rows = tfrecord_writer.write_shard(paths[index], packed)
    return {"records_written": packed.sequences, "packed_rows": rows}


def build(pipeline, input_files, paths, options, runs_dir):
    """Adds the pipeline that writes the records of `input_files` into the shards `paths`.

    Args:
      pipeline: a `beam.Pipeline`.
      input_files: list of text files (`document_reader.expand_input_patterns`).
      paths: output TFRecord files, one per shard (every one is written, maybe empty).
      options: a `record_options.Options`.
      runs_dir: a new folder every worker can write (local, or `gs://` for
        distributed runners) for the sorted runs; the caller deletes it after the run.

    Local paths reach the workers made absolute: on a cluster they must name a folder
    that every worker sees at that path (a shared file system), or be URLs (`gs://`).
    """
    # Workers run in other folders (Dask's) or on other machines: they get absolute paths.
    input_files, paths = beam_runner.for_workers(input_files), beam_runner.for_workers(paths)
    runs_dir = beam_runner.for_workers([runs_dir])[0]
    options = dataclasses.replace(options,
                                  vocab_file=beam_runner.for_workers([options.vocab_file])[0])
    beam_runner.dask_partitions(pipeline.options, len(input_files))
    documents = (
        pipeline
        | "Files" >> beam.Create(input_files)
        | "ReadDocuments" >> beam.ParDo(_ReadDocuments(options.max_document_sentences)))
    # Counted as read (documents without WordPieces included), so that the count is ready before
    # tokenizing: the bucket step then runs in the tokenizing step's workers, and the tokenized
    # documents cross the runner once, not three times.
    documents_count = documents | "CountDocuments" >> beam.combiners.Count.Globally()
    buckets = documents_count | "NumBuckets" >> beam.Map(pretraining_records.num_buckets,
                                                         options.documents_per_bucket)
    shards = pipeline | "EveryShard" >> beam.Create([(i, None) for i in range(len(paths))])
    tokenized = (
        documents
        | "GroupByText" >> beam.GroupByKey()
        | "DocumentKeys" >> beam.FlatMap(_keyed)
        | "Batch" >> beam.BatchElements(min_batch_size=options.tokenize_batch_size,
                                        max_batch_size=options.tokenize_batch_size,
                                        element_size_fn=lambda kv: len(kv[1]))
        | "Tokenize" >> beam.ParDo(_Tokenize(options.vocab_file, options.do_lower_case)))
    records = (tokenized | "Documents" >> beam.FlatMap(_second)
               | "AssignBuckets" >> beam.FlatMap(_to_parts, options.random_seed,
                                                 beam.pvalue.AsSingleton(buckets),
                                                 _work_units(pipeline))
               | "GroupByBucket" >> beam.GroupByKey()
               | "Records" >> beam.ParDo(_BucketRecords(options, len(paths), runs_dir)))
    written = (
        (records, shards)
        | "WithEmptyShards" >> beam.Flatten()
        | "GroupByShard" >> beam.GroupByKey()
        | "Write"
        >> (
            beam.Map(_write, paths, runs_dir)
            if options.max_sequences_per_pack == 1
            else beam.Map(_write_packed, paths, runs_dir, options)
        )
    )
    # Applied last: the DaskRunner computes the last step only, and all the others lead into it.
    _ = ((documents_count | "ReadCounts" >> beam.Map(_named, "documents_read"),
          tokenized | "TokenizeCounts" >> beam.Map(_first),
          records | "RecordCounts" >> beam.Map(_run_records),
          written)
         | "AllCounts" >> beam.Flatten()
         | "SumCounts" >> beam.CombineGlobally(_sum_counts).without_defaults()
         | "WriteCounts" >> beam.Map(_write_counts, f"{runs_dir}/{COUNTS_FILE}"))


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


def _named(value, name):
    return {name: value}


def _run_records(shard_run):
    """`(shard, (run, records))` → `{"instances": records}`."""
    return {"instances": shard_run[1][1]}


def counters(runs_dir):
    """The pipeline's counts (`COUNTERS`), from the counts file its last step wrote in `runs_dir`.

    Raises:
      pretraining_records.DataLossError: if the runner lost documents or records between two
        steps, or finished without running the last step.
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    path = f"{runs_dir}/{COUNTS_FILE}"
    if not tf.io.gfile.exists(path):
        raise pretraining_records.DataLossError(
            f"the Beam runner finished without running the pipeline's last step (no {COUNTS_FILE})")
    with tf.io.gfile.GFile(path) as f:
        totals = dict(dict.fromkeys(COUNTERS + _CHECK_COUNTERS, 0), **json.load(f))
    read, tokenized = totals.pop("documents_read"), totals["documents"] + totals["empty_documents"]
    written = totals.pop("records_written")
    totals["rows"] = totals.pop("packed_rows") or totals["instances"]  # records in the files
    if read != tokenized or written != totals["instances"]:
        raise pretraining_records.DataLossError(
            f"the Beam runner lost data: {read} documents read, {tokenized} tokenized; "
            f"{totals['instances']} records made, {written} written")
    return totals
