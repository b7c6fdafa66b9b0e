"""`predict_corpus`: a model over every line of a corpus, on Apache Beam, into result shards.

The launcher side of `tools/predict.py`: it checks what a user can get wrong before the
pipeline starts (the output folder, the input patterns, the model folder and its head, from
the folder's small files: `predictor.check_settings`; the model itself is built by each worker
only, so the DirectRunner builds it once), runs `pipeline.build` on the runner that
`beam_pipeline_options` names, and reads the counts the last step wrote. A failed run removes
what it wrote, complete shards included, and the folder if it made it: the folder then
holds nothing of the run, and the same command can run again.

Example:
>>> predict_corpus("corpus/*.txt", "out/preds", PredictSettings(model="sst2/"))  # doctest: +SKIP
{'lines': 1200, 'truncated_lines': 3, 'empty_lines': 40, ..., 'lines_per_second': 212.5}
"""

import dataclasses
import time
import uuid

from absl import logging

from bert_tf import file_io
from bert_tf.corpus_inference import predictor, readers, writers
from bert_tf.corpus_inference import progress as progress_lib
from bert_tf.data import document_reader
from bert_tf.errors import UserError
from bert_tf.file_io import refuse_existing

# `windowed_lines`: long lines read as windows (--long_lines=windows), else `truncated_lines`.
COUNTERS = ("lines", "truncated_lines", "windowed_lines", "empty_lines", "undecodable_lines",
            "cut_lines", "shards")


def predict_corpus(input_patterns, output_dir, settings, output_format="parquet", num_shards=1,
                   reader=None, beam_pipeline_options=None, progress=None):
    """Writes the predictions of `settings`' model on every line of the input files.

    Args:
      input_patterns: comma-separated globs (text, `.jsonl`, `.parquet`; `.gz` ok).
      output_dir: a new or empty folder for the shards (`writers`).
      settings: a `predictor.PredictSettings`.
      output_format: "parquet" or "jsonl".
      num_shards: shards the results are spread over (by line, a stable hash).
      reader: a `readers.LineReader` (columns, undecodable lines); default: text column "text".
      progress: a function called with a `progress.Progress` about once a second while lines
        are predicted (the caller shows it), or None.
      beam_pipeline_options: Beam options as `name=value,...` (`beam_runner.pipeline_options`).

    Returns:
      A dict of `COUNTERS`, `seconds`, `lines_per_second` and `output_files`.

    Raises:
      OutputExistsError: `output_dir` holds files.
      InputError: no input file, or one that cannot be read (names file, line, column), or a
        model the workers cannot build (damaged checkpoint; `max_seq_length` above the
        positions of a folder whose small files do not tell them: Model Garden, Keras file).
      TaskInputError, CheckpointError, FileNotFoundError: a wrong head, a `max_seq_length`
        above the positions the folder records, or an unreadable folder.
    """
    from bert_tf.corpus_inference import pipeline as pipeline_lib  # pylint: disable=import-outside-toplevel
    from bert_tf.data import beam_runner  # pylint: disable=import-outside-toplevel  (Beam is an extra.)

    if output_format not in writers.FORMATS:
        raise UserError(f"--output_format={output_format}: choose one of {list(writers.FORMATS)}.")
    refuse_existing(output_dir, "output folder", flag="output")
    names = document_reader.expand_input_patterns(input_patterns)
    predictor.check_settings(settings)  # a wrong head or length, as one line, before any work
    reader = reader or readers.LineReader()
    beam = beam_runner.import_beam()
    pipeline = beam.Pipeline(options=beam_runner.pipeline_options(beam_pipeline_options))
    made_folder = not file_io.exists(output_dir)
    file_io.makedirs(output_dir)
    output_dir, model = beam_runner.for_workers([output_dir, settings.model])
    counts_path = f"{output_dir}/.counts.json.tmp-{uuid.uuid4().hex[:8]}"
    pipeline_lib.build(pipeline, beam_runner.for_workers(names), names,
                       dataclasses.replace(settings, model=model), reader, output_dir,
                       num_shards, output_format, counts_path)
    logging.info("predicting on the lines of %d file(s) into %s", len(names), output_dir)
    start = time.monotonic()
    watcher = progress_lib.Watcher(output_dir, names, progress)
    try:
        beam_runner.run(pipeline)
        counts = writers.read_counts(counts_path)
        if counts is None:
            raise UserError("the Beam runner finished without running the pipeline's last step; "
                            "nothing was kept: run again")
    except BaseException:
        writers.remove_partial(output_dir, shards_too=True)
        if made_folder and not file_io.listdir(output_dir):
            writers.remove_empty_folder(output_dir)
        raise
    finally:
        watcher.stop()
        if file_io.exists(output_dir):
            writers.remove_partial(output_dir)
    stats = dict(dict.fromkeys(COUNTERS, 0), **counts)
    stats["seconds"] = time.monotonic() - start
    stats["lines_per_second"] = stats["lines"] / max(stats["seconds"], 1e-9)
    stats["output_files"] = writers.shards(output_dir)
    return stats
