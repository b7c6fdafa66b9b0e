"""Learns a WordPiece vocab from a corpus of any size: word counts on Apache Beam.

    files ─ lines ─ batches ─ word counts per batch (the tokenizer's normalisation)
      ─ sum per word (CombinePerKey) ─ one counts file, sorted ─ tensorflow-text's learner

Counting is the part that grows with the corpus; it runs on any Beam runner (the
DaskRunner included: the counts file is written by one step of ours, not by Beam's file
sink, which on the DaskRunner runs its steps more than once and leaves `beam-temp-*`
folders behind).
The learner then runs here on the counts (one entry per distinct word), with
the same function as the in-memory `vocab_learner.learn_vocab`, so both give the
same vocab for the same text.
"""

import collections
import uuid

import tensorflow as tf

from bert_tf.data import beam_runner, document_reader
from bert_tf.tokenization import vocab_learner

beam = beam_runner.import_beam()


def _write_lines(lines, path):
    """Writes `lines` sorted (the same bytes from every runner), through a temporary file."""
    temporary = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with tf.io.gfile.GFile(temporary, "w") as f:
        f.write("")  # Creates the file where there are no lines.
        for line in sorted(lines):
            f.write(line + "\n")
    tf.io.gfile.rename(temporary, path, overwrite=True)


class _CountWords(beam.DoFn):
    """A batch of lines (bytes) → `(word, count)` pairs of that batch."""

    def __init__(self, lower_case):
        self._lower_case = lower_case

    def process(self, lines):
        yield from vocab_learner.word_counts(lines, self._lower_case).items()


def count_words(input_patterns, counts_file, lower_case=True, beam_pipeline_options=None,
                batch_size=1024):
    """Counts the normalised words of the text files and writes `word<TAB>count` lines.

    Args:
      input_patterns: comma-separated globs or a list of them (`.gz` ok, `gs://` ok).
      counts_file: the file to write (one line per distinct word, sorted).
      lower_case: normalise as an uncased tokenizer.
      beam_pipeline_options: Beam options as `name=value,...`.
      batch_size: lines normalised per step.

    Raises:
      document_reader.InputError: a pattern matches no file.
    """
    files = beam_runner.for_workers(document_reader.expand_input_patterns(input_patterns))
    counts_file = beam_runner.for_workers([counts_file])[0]
    pipeline = beam.Pipeline(options=beam_runner.pipeline_options(beam_pipeline_options))
    beam_runner.dask_partitions(pipeline.options, len(files))
    _ = (pipeline
         | "Files" >> beam.Create(files)
         | "Lines" >> beam.io.ReadAllFromText(coder=beam.coders.BytesCoder())
         | "Batch" >> beam.BatchElements(min_batch_size=batch_size, max_batch_size=batch_size)
         | "CountBatch" >> beam.ParDo(_CountWords(lower_case))
         | "Sum" >> beam.CombinePerKey(sum)
         | "Format" >> beam.MapTuple(lambda word, count: f"{word}\t{count}")
         | "AllLines" >> beam.combiners.ToList()
         | "Write" >> beam.Map(_write_lines, counts_file))
    beam_runner.run(pipeline)


def read_counts(counts_file):
    """Reads the `word<TAB>count` lines of `count_words` into a dict."""
    counts = collections.Counter()
    with tf.io.gfile.GFile(counts_file, "r") as f:
        for line in f:
            word, count = line.rstrip("\n").rsplit("\t", 1)
            counts[word] += int(count)
    return counts


def learn_vocab(input_patterns, counts_file, vocab_size, lower_case=True, num_unused=100,
                beam_pipeline_options=None, **learn_params):
    """Learns a WordPiece vocab from text files: counts on Beam, then learns here.

    Args:
      input_patterns: comma-separated globs or a list of them, one text per line.
      counts_file: where the word counts go (a path the Beam workers can write,
        e.g. on `gs://` for Dataflow); kept for relearning at other sizes.
      vocab_size, lower_case, num_unused, **learn_params: as `vocab_learner.learn_vocab`.
      beam_pipeline_options: Beam options as `name=value,...`; default DirectRunner.

    Returns:
      The vocab, a list of str.

    Raises:
      document_reader.InputError: a pattern matches no file.
      ValueError: the text holds no words.

    Example:
    >>> vocab = learn_vocab("corpus/*.txt", "/tmp/counts.tsv", 8000)  # doctest: +SKIP
    """
    count_words(input_patterns, counts_file, lower_case, beam_pipeline_options)
    return vocab_learner.learn_vocab_from_counts(read_counts(counts_file), vocab_size, num_unused,
                                                 **learn_params)
