"""Creates google-research/bert pretraining TFRecords from text, streaming.

Same flags and example semantics as google-research `create_pretraining_data.py`
(see `instance_builder`), with these differences so that corpora of any size
work:
- Documents are streamed. NotNext B segments come from a bounded pool of
  `document_buffer_size` documents (google-research draws from the whole corpus
  held in memory). Documents wait in the pool and leave it in random order, which
  also shuffles documents within that window.
- Instances pass through a shuffle buffer of `shuffle_buffer_size` records
  instead of one global shuffle, and the `dupe_factor` copies of a document are
  made when it leaves the pool (each copy with fresh short-length draws and
  masks), not in `dupe_factor` passes over the corpus.
- `num_workers` processes each take every `num_workers`-th document and write
  their own shards (`num_output_shards >= num_workers`). Output is a pure
  function of inputs, flags, `random_seed` and `num_workers`: the same command
  gives byte-identical files; another worker count gives other (equally valid)
  examples.
- Shards are written under a temporary name and renamed when complete.
"""

import dataclasses
import multiprocessing
import os
import random
import resource
import time

from absl import logging
import numpy as np
import tensorflow as tf

from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.data import document_reader
from bert_tf.data import instance_builder
from bert_tf.data import tfrecord_writer


@dataclasses.dataclass
class Options:
    """Flags of `tools/create_pretraining_data.py` (google-research names and defaults)."""

    vocab_file: str
    do_lower_case: bool = True
    do_whole_word_mask: bool = False
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    random_seed: int = 12345
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    document_buffer_size: int = 1000
    shuffle_buffer_size: int = 10000
    max_document_sentences: int = 10000
    tokenize_batch_size: int = 1024


def output_paths(output_file, num_output_shards=1):
    """Output files: a comma list as given, else `<output_file>-0000i-of-0000n` shards."""
    paths = [p.strip() for p in output_file.split(",") if p.strip()]
    if len(paths) > 1:
        if num_output_shards not in (1, len(paths)):
            raise ValueError(f"--output_file lists {len(paths)} files but --num_output_shards={num_output_shards}")
        return paths
    if num_output_shards < 1:
        raise ValueError(f"--num_output_shards must be at least 1, got {num_output_shards}")
    if num_output_shards == 1:
        return paths
    return [f"{paths[0]}-{i:05d}-of-{num_output_shards:05d}" for i in range(num_output_shards)]


def check_options(options):
    """Validates `options`; warns when `max_predictions_per_seq` caps masking."""
    if options.dupe_factor < 1:
        raise ValueError(f"dupe_factor must be at least 1, got {options.dupe_factor}")
    if not 0.0 <= options.short_seq_prob <= 1.0:
        raise ValueError(f"short_seq_prob must be in [0, 1], got {options.short_seq_prob}")
    if options.document_buffer_size < 2:
        raise ValueError(f"document_buffer_size must be at least 2, got {options.document_buffer_size}")
    if options.max_document_sentences < 1 or options.shuffle_buffer_size < 1:
        raise ValueError("max_document_sentences and shuffle_buffer_size must be positive")
    expected = int(round(options.max_seq_length * options.masked_lm_prob))
    if options.max_predictions_per_seq < expected:
        logging.warning(
            "max_predictions_per_seq=%d caps masking: a full sequence of max_seq_length=%d at masked_lm_prob=%g "
            "would mask %d tokens, so long sequences get an effective masked_lm_prob of %.3f. Use "
            "max_predictions_per_seq >= %d.", options.max_predictions_per_seq, options.max_seq_length,
            options.masked_lm_prob, expected, options.max_predictions_per_seq / options.max_seq_length, expected)


def _tokenized_documents(documents, tokenizer, batch_size, stats):
    """Tokenizes documents in batches of >= `batch_size` sentences; yields id documents."""
    tokenize = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
    pending = []

    def flush():
        sentences = [s for d in pending for s in d.sentences]
        ids = tokenize(tf.constant(sentences))  # [N, (words), (pieces)]
        flat = ids.flat_values.numpy().tolist()
        piece_splits = ids.values.row_splits.numpy()
        word_splits = ids.row_splits.numpy()
        k = 0
        for document in pending:
            result = []
            for _ in document.sentences:
                first, last = piece_splits[word_splits[k]], piece_splits[word_splits[k + 1]]
                if last > first:
                    starts = np.zeros(last - first, dtype=bool)
                    starts[piece_splits[word_splits[k]:word_splits[k + 1]] - first] = True
                    result.append((flat[first:last], starts.tolist()))
                k += 1
            stats["sentences"] += len(result)
            if result:
                yield result
            else:
                stats["empty_documents"] += 1
        pending.clear()

    count = 0
    for document in documents:
        pending.append(document)
        count += len(document.sentences)
        if count >= batch_size:
            yield from flush()
            count = 0
    if pending:
        yield from flush()


def _worker(input_files, paths, options, worker_index, num_workers):
    """Processes every `num_workers`-th document into `paths`; returns statistics."""
    rng = random.Random(f"{options.random_seed}:{worker_index}")
    tokenizer = BertTokenizer(options.vocab_file, lower_case=options.do_lower_case)
    builder = instance_builder.InstanceBuilder(
        options.max_seq_length, options.max_predictions_per_seq, options.masked_lm_prob, options.short_seq_prob,
        options.do_whole_word_mask, tokenizer.vocab_size, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id, rng)
    stats = dict(documents=0, sentences=0, instances=0, empty_documents=0)
    documents = (d for i, d in enumerate(document_reader.read_documents(input_files, options.max_document_sentences))
                 if i % num_workers == worker_index)
    shuffle_buffer = []
    start = last_log = time.monotonic()

    with tfrecord_writer.ShardedWriter(paths) as writer:
        def emit(pool, j):
            def random_document():
                k = rng.randrange(len(pool) - 1)
                return pool[k + 1 if k >= j else k]
            for _ in range(options.dupe_factor):
                for instance in builder.build(pool[j], random_document):
                    record = tfrecord_writer.serialize_instance(
                        instance, options.max_seq_length, options.max_predictions_per_seq)
                    if len(shuffle_buffer) < options.shuffle_buffer_size:
                        shuffle_buffer.append(record)
                        continue
                    k = rng.randrange(len(shuffle_buffer))
                    writer.write(shuffle_buffer[k])
                    shuffle_buffer[k] = record
                    stats["instances"] += 1
            stats["documents"] += 1

        pool = []
        for document in _tokenized_documents(documents, tokenizer, options.tokenize_batch_size, stats):
            if len(pool) < options.document_buffer_size:
                pool.append(document)
                continue
            j = rng.randrange(len(pool))
            emit(pool, j)
            pool[j] = document
            if time.monotonic() - last_log > 10:
                last_log = time.monotonic()
                logging.info("worker %d: %d documents, %d sentences, %d instances, %.0f sentences/s", worker_index,
                             stats["documents"], stats["sentences"], stats["instances"],
                             stats["sentences"] / (last_log - start))
        if len(pool) + stats["documents"] < 2:
            raise document_reader.InputError(
                f"worker {worker_index} of {num_workers} got {len(pool)} document(s) from {input_files}: NotNext "
                "pairs need at least two documents (separate documents by a blank line)")
        order = list(range(len(pool)))
        rng.shuffle(order)
        for j in order:
            emit(pool, j)
        rng.shuffle(shuffle_buffer)
        for record in shuffle_buffer:
            writer.write(record)
        stats["instances"] += len(shuffle_buffer)
    stats["seconds"] = time.monotonic() - start
    stats["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return stats


def _spawned_worker(args):
    """Entry point of a worker process: share the CPUs, then run `_worker`."""
    threads = max(1, (os.cpu_count() or 1) // args[-1])
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    return _worker(*args)


def create_pretraining_data(input_patterns, output_file, options, num_output_shards=1, num_workers=1):
    """Writes pretraining TFRecords for the text files matching `input_patterns`.

    Args:
      input_patterns: comma-separated globs (str) or a list of them; text in
        one-sentence-per-line format, blank lines between documents; `.gz` ok.
      output_file: output path, or comma-separated output paths.
      options: an `Options`.
      num_output_shards: with a single `output_file`, write this many shards
        named `<output_file>-0000i-of-0000n`.
      num_workers: processes; each takes every `num_workers`-th document.

    Returns:
      A dict with `documents, sentences, instances, empty_documents` (summed
      over workers), `seconds` (wall time), `peak_rss_mb` (sum of the peak
      resident memory of the processes) and `output_files`.

    Raises:
      document_reader.InputError: for unusable input files.
      ValueError: for bad options or an unwritable output path.
    """
    check_options(options)
    input_files = document_reader.expand_input_patterns(input_patterns)
    paths = output_paths(output_file, num_output_shards)
    if num_workers < 1 or len(paths) < num_workers:
        raise ValueError(f"need 1 <= num_workers <= number of output shards, got num_workers={num_workers} "
                         f"and {len(paths)} output file(s); raise --num_output_shards")
    tfrecord_writer.check_writable(paths)
    logging.info("reading %d input file(s) with %d worker(s) into %d shard(s)", len(input_files), num_workers,
                 len(paths))
    start = time.monotonic()
    jobs = [(input_files, paths[w::num_workers], options, w, num_workers) for w in range(num_workers)]
    if num_workers == 1:
        results = [_worker(*jobs[0])]
    else:
        # spawn, not fork: TensorFlow's runtime is not fork-safe.
        with multiprocessing.get_context("spawn").Pool(num_workers) as pool:
            results = pool.map(_spawned_worker, jobs)
    totals = {key: sum(r[key] for r in results) for key in ("documents", "sentences", "instances", "empty_documents")}
    totals["seconds"] = time.monotonic() - start
    totals["output_files"] = paths
    # Workers run at the same time: their peaks add up (plus this process when they are separate).
    totals["peak_rss_mb"] = sum(r["peak_rss_mb"] for r in results) + (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if num_workers > 1 else 0)
    logging.info("wrote %d instances from %d documents (%d sentences) in %.1f s", totals["instances"],
                 totals["documents"], totals["sentences"], totals["seconds"])
    return totals
