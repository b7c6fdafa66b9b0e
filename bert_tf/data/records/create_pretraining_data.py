"""Creates google-research/bert pretraining TFRecords from text, on Apache Beam.

Same flags (`record_options.Options`) and example semantics as google-research
`create_pretraining_data.py` (see `instance_builder`), built as a Beam pipeline
(`beam_pipeline`) so that corpora of any size run on one machine (DirectRunner)
or many (Dataflow, Flink, Spark). Differences from google-research:
- The output is a function of the input text, the options and `random_seed`
  alone: the same records for any runner and any worker count, byte-identical
  shards from the same command (`pretraining_records` keys every draw).
- NotNext B segments come from another document of the same random bucket of
  about `documents_per_bucket` documents, not from the whole corpus: for each
  document the other documents of its bucket are a uniform random sample of
  the corpus, so B is still a uniformly drawn other document.
- Each of the `dupe_factor` copies of a document draws from its own keyed
  random generator, so copies can be made on different workers with the same
  result; records are globally shuffled by a random sort key.
- Shards are written under a temporary name and renamed when complete; an
  output file that exists is refused before any work. Records reach their
  shard through sorted run files in `<first output file>.runs-<id>/`, removed
  when the run ends, whether it succeeded or not.
"""

import time
import uuid

from absl import logging

from bert_tf.data import document_reader
from bert_tf.data.records import record_options, tfrecord_writer
from bert_tf.data.records.pretraining_records import DataLossError
from bert_tf.tokenization import vocab as vocab_lib


def output_paths(output_file, num_output_shards=1):
    """Output files: a comma list as given, else `<output_file>-0000i-of-0000n` shards."""
    paths = [p.strip() for p in output_file.split(",") if p.strip()]
    if len(paths) > 1:
        if num_output_shards not in (1, len(paths)):
            raise ValueError(f"--output_file lists {len(paths)} files but "
                             f"--num_output_shards={num_output_shards}")
        return paths
    if num_output_shards < 1:
        raise ValueError(f"--num_output_shards must be at least 1, got {num_output_shards}")
    if num_output_shards == 1:
        return paths
    return [f"{paths[0]}-{i:05d}-of-{num_output_shards:05d}" for i in range(num_output_shards)]


def _check_two_documents(input_files, max_document_sentences):
    """Raises InputError unless the input holds two documents (reads only as far as those)."""
    count = 0
    for _ in document_reader.read_documents(input_files, max_document_sentences):
        count += 1
        if count == 2:
            return
    raise document_reader.InputError(
        f"got {count} document(s) from {input_files}: NotNext pairs need at least two documents "
        "(separate documents by a blank line)")


def create_pretraining_data(input_patterns, output_file, options, num_output_shards=1,
                            beam_pipeline_options=None):
    """Writes pretraining TFRecords for the text files matching `input_patterns`.

    Args:
      input_patterns: comma-separated globs (str) or a list of them; text in
        one-sentence-per-line format, blank lines between documents; `.gz` ok;
        local or any filesystem `tf.io.gfile` reads (`gs://`).
      output_file: output path, or comma-separated output paths.
      options: a `record_options.Options`.
      num_output_shards: with a single `output_file`, write this many shards
        named `<output_file>-0000i-of-0000n`.
      beam_pipeline_options: Beam options as `name=value,...` (see
        `beam_runner.pipeline_options`); default: DirectRunner, one worker.

    Returns:
      A dict with `documents, sentences, instances, empty_documents` (documents
      without WordPieces, skipped), `rows` (records written: `instances`, or
      fewer with `options.max_sequences_per_pack > 1`), `seconds` (wall time)
      and `output_files`.

    Raises:
      document_reader.InputError: for unusable input files.
      ValueError: for bad options or an output path that exists or cannot be written.
      DataLossError: if the runner lost data (the output files are removed).
      bert_tf.errors.MissingExtraError: without apache_beam.
    """
    record_options.check_options(options)
    record_options.instance_builder(options, vocab_lib.load_vocab(options.vocab_file))
    input_files = document_reader.expand_input_patterns(input_patterns)
    paths = output_paths(output_file, num_output_shards)
    tfrecord_writer.check_new_and_writable(paths)
    _check_two_documents(input_files, options.max_document_sentences)
    from bert_tf.data import beam_runner  # pylint: disable=import-outside-toplevel
    from bert_tf.data.records import beam_pipeline  # pylint: disable=import-outside-toplevel  (Beam is an extra.)

    beam = beam_runner.import_beam()
    logging.info("reading %d input file(s) into %d shard(s)", len(input_files), len(paths))
    start = time.monotonic()
    pipeline = beam.Pipeline(options=beam_runner.pipeline_options(beam_pipeline_options))
    runs_dir = f"{paths[0]}.runs-{uuid.uuid4().hex[:8]}"
    beam_pipeline.build(pipeline, input_files, paths, options, runs_dir)
    try:
        beam_runner.run(pipeline)
        stats = beam_pipeline.counters(runs_dir)
    except DataLossError as error:
        tfrecord_writer.remove(paths)  # They did not exist before the run (checked above).
        raise DataLossError(f"{error}; the output files were removed: run again") from None
    finally:
        tfrecord_writer.remove([runs_dir])
    stats["seconds"] = time.monotonic() - start
    stats["output_files"] = paths
    logging.info("wrote %d instances from %d documents (%d sentences) in %.1f s",
                 stats["instances"], stats["documents"], stats["sentences"], stats["seconds"])
    if options.max_sequences_per_pack > 1:
        logging.info("packed into %d rows of up to %d sequences (--max_sequences_per_pack)",
                     stats["rows"], options.max_sequences_per_pack)
    return stats
