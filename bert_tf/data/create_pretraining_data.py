"""Creates google-research/bert pretraining TFRecords from text, on Apache Beam.

Same flags and example semantics as google-research `create_pretraining_data.py`
(see `instance_builder`), built as a Beam pipeline (`beam_pipeline`) so that
corpora of any size run on one machine (DirectRunner) or many (Dataflow, Flink,
Spark). Differences from google-research:
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

import dataclasses
import time
import uuid

from absl import logging

from bert_tf.data import document_reader
from bert_tf.data import instance_builder as instance_builder_lib
from bert_tf.data.pretraining_records import DataLossError
from bert_tf.data import tfrecord_writer
from bert_tf.tokenization import vocab as vocab_lib

# Buckets hold documents_per_bucket on average; at 50 the chance that one holds fewer than
# the two a NotNext pair needs is about 1e-20.
_MIN_DOCUMENTS_PER_BUCKET = 50


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
    documents_per_bucket: int = 1000
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


def instance_builder(options, vocab):
    """The `InstanceBuilder` of `options` for `vocab` (a list of tokens); validates both."""
    vocab_lib.check_case_matches_vocab(vocab, options.do_lower_case, options.vocab_file)
    ids = vocab_lib.special_token_ids(vocab)
    return instance_builder_lib.InstanceBuilder(
        options.max_seq_length, options.max_predictions_per_seq, options.masked_lm_prob, options.short_seq_prob,
        options.do_whole_word_mask, len(vocab), ids.cls_id, ids.sep_id, ids.mask_id)


def check_options(options):
    """Validates `options`; warns when `max_predictions_per_seq` caps masking."""
    if options.dupe_factor < 1:
        raise ValueError(f"dupe_factor must be at least 1, got {options.dupe_factor}")
    if not 0.0 <= options.short_seq_prob <= 1.0:
        raise ValueError(f"short_seq_prob must be in [0, 1], got {options.short_seq_prob}")
    if options.documents_per_bucket < _MIN_DOCUMENTS_PER_BUCKET:
        raise ValueError(f"documents_per_bucket must be at least {_MIN_DOCUMENTS_PER_BUCKET}, "
                         f"got {options.documents_per_bucket}")
    if options.max_document_sentences < 1 or options.tokenize_batch_size < 1:
        raise ValueError("max_document_sentences and tokenize_batch_size must be positive")
    expected = int(round(options.max_seq_length * options.masked_lm_prob))
    if options.max_predictions_per_seq < expected:
        logging.warning(
            "max_predictions_per_seq=%d caps masking: a full sequence of max_seq_length=%d at masked_lm_prob=%g "
            "would mask %d tokens, so long sequences get an effective masked_lm_prob of %.3f. Use "
            "max_predictions_per_seq >= %d.", options.max_predictions_per_seq, options.max_seq_length,
            options.masked_lm_prob, expected, options.max_predictions_per_seq / options.max_seq_length, expected)


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


def create_pretraining_data(input_patterns, output_file, options, num_output_shards=1, beam_pipeline_options=None):
    """Writes pretraining TFRecords for the text files matching `input_patterns`.

    Args:
      input_patterns: comma-separated globs (str) or a list of them; text in
        one-sentence-per-line format, blank lines between documents; `.gz` ok;
        local or any filesystem `tf.io.gfile` reads (`gs://`).
      output_file: output path, or comma-separated output paths.
      options: an `Options`.
      num_output_shards: with a single `output_file`, write this many shards
        named `<output_file>-0000i-of-0000n`.
      beam_pipeline_options: Beam options as `name=value,...` (see
        `beam_options.pipeline_options`); default: DirectRunner, one worker.

    Returns:
      A dict with `documents, sentences, instances, empty_documents` (documents
      without WordPieces, skipped), `seconds` (wall time) and `output_files`.

    Raises:
      document_reader.InputError: for unusable input files.
      ValueError: for bad options or an output path that exists or cannot be written.
      DataLossError: if the runner lost data (the output files are removed).
      bert_tf.errors.MissingExtraError: without apache_beam.
    """
    check_options(options)
    instance_builder(options, vocab_lib.load_vocab(options.vocab_file))
    input_files = document_reader.expand_input_patterns(input_patterns)
    paths = output_paths(output_file, num_output_shards)
    tfrecord_writer.check_new_and_writable(paths)
    _check_two_documents(input_files, options.max_document_sentences)
    from bert_tf.data import beam_options  # pylint: disable=import-outside-toplevel
    from bert_tf.data import beam_pipeline  # pylint: disable=import-outside-toplevel  (Beam is an extra.)

    beam = beam_options.import_beam()
    logging.info("reading %d input file(s) into %d shard(s)", len(input_files), len(paths))
    start = time.monotonic()
    pipeline = beam.Pipeline(options=beam_options.pipeline_options(beam_pipeline_options))
    runs_dir = f"{paths[0]}.runs-{uuid.uuid4().hex[:8]}"
    beam_pipeline.build(pipeline, input_files, paths, options, runs_dir)
    try:
        stats = beam_pipeline.counters(beam_options.run(pipeline))
    except DataLossError as error:
        tfrecord_writer.remove(paths)  # They did not exist before the run (checked above).
        raise DataLossError(f"{error}; the output files were removed: run again") from None
    finally:
        tfrecord_writer.remove([runs_dir])
    stats["seconds"] = time.monotonic() - start
    stats["output_files"] = paths
    logging.info("wrote %d instances from %d documents (%d sentences) in %.1f s", stats["instances"],
                 stats["documents"], stats["sentences"], stats["seconds"])
    return stats
