"""The Beam pipeline of `tools/predict.py`: files in, result shards and their counts out.

    files ─ read lines (a file per worker; per-file counts of skipped lines) ─ reshuffle
      ─ RunInference (a `Predictor` per worker, windows of lines sorted by length)
      ─ key by shard ─ group ─ write each shard (temporary name, then rename)
      ─ the counts of every step, summed into one JSON file the launcher reads

The reshuffle spreads one big file's lines over every worker (reading is cheap, inference is
not) on the runners that reshuffle; the DaskRunner does not (a no-op there), so on Dask the
files bound the parallelism: one bag partition per file (`beam_runner.dask_partitions`). Counts
travel as data as well as Beam metrics (namespace `bert_tf.predict`), because the DaskRunner has no
metrics; and every step leads into the last one, the only one the DaskRunner computes
(`beam_runner`).
"""

import collections
import zlib

from bert_tf import errors
from bert_tf.corpus_inference import model_handler, readers, writers
from bert_tf.data import beam_runner

beam = beam_runner.import_beam()
RunInference = errors.require_extra("apache_beam.ml.inference", extra="beam").RunInference


def _metered(counts):
    """`counts` (a dict), each also added to the Beam counter of its name."""
    for name, value in counts.items():
        beam.metrics.Metrics.counter(model_handler.METRICS_NAMESPACE, name).inc(value)
    return counts


class _ReadLines(beam.DoFn):
    """`(file index, (path, name))` → the file's `Line`s, then a dict of what it skipped."""

    def __init__(self, reader):
        self._reader = reader

    def process(self, element):
        index, (path, name) = element
        yield from self._reader.lines(path, index, name)
        yield _metered(dict(self._reader.counts))


def _is_line(element):
    return isinstance(element, readers.Line)


def _is_counts(element):
    return isinstance(element, dict)


def _shard_of(prediction, num_shards):
    """A shard from the line's place alone: the same on every worker and every run."""
    return zlib.crc32(repr(prediction.order).encode()) % num_shards, prediction


def _write(shard, output_dir, num_shards, output_format, long_counter):
    """Writes a shard's results in line order; returns its counts (long lines: `long_counter`)."""
    index, predictions = shard
    predictions = sorted(predictions, key=lambda p: p.order)
    writers.write_shard(output_dir, index, num_shards, output_format,
                        [p.record for p in predictions])
    return _metered({"lines": len(predictions), "shards": 1,
                     long_counter: sum(p.long for p in predictions)})


def _sum_counts(counts):
    """Sums dicts of counts (a `CombineGlobally` function: its own outputs come back)."""
    total = collections.Counter()
    for c in counts:
        total.update(c)
    return dict(total)


def build(pipeline, files, names, settings, reader, output_dir, num_shards, output_format,
          counts_path):
    """Adds the steps that write the predictions of `files` into `output_dir`'s shards.

    Args:
      pipeline: a `beam.Pipeline`.
      files: the input files, as every worker reaches them (`beam_runner.for_workers`).
      names: how each file is named in ids (as the user's glob gave it).
      settings: a `predictor.PredictSettings` (its `model` as every worker reaches it).
      reader: a `readers.LineReader`.
      output_dir: the existing, empty output folder (as every worker reaches it).
      num_shards: how many shards the lines are spread over (an empty shard is not written).
      output_format: one of `writers.FORMATS`.
      counts_path: where the last step writes the summed counts.
    """
    beam_runner.dask_partitions(pipeline.options, len(files))
    elements = (pipeline
                | "Files" >> beam.Create(list(enumerate(zip(files, names))))
                | "ReadLines" >> beam.ParDo(_ReadLines(reader)))
    written = (
        elements
        | "Lines" >> beam.Filter(_is_line)
        | "Spread" >> beam.Reshuffle()
        | "Predict"
        >> RunInference(model_handler.TaskModelHandler(settings, progress_folder=output_dir))
        | "KeyByShard" >> beam.Map(_shard_of, num_shards)
        | "GroupByShard" >> beam.GroupByKey()
        | "Write"
        >> beam.Map(
            _write,
            output_dir,
            num_shards,
            output_format,
            f"{'windowed' if settings.long_lines == 'windows' else 'truncated'}_lines",
        )
    )
    # Applied last: the DaskRunner computes the last step only, and all the others lead into it.
    _ = ((elements | "ReadCounts" >> beam.Filter(_is_counts), written)
         | "AllCounts" >> beam.Flatten()
         | "SumCounts" >> beam.CombineGlobally(_sum_counts).without_defaults()
         | "WriteCounts" >> beam.Map(writers.write_counts, counts_path))
