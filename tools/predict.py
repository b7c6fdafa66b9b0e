r"""Runs a model over every line of a corpus on Apache Beam: labels, tags or embeddings.

    python tools/predict.py --model=fine_tuned_sst2/ --input_file='corpus/*.txt' \
        --output=out/preds --output_format=parquet --num_shards=4 \
        --beam_pipeline_options=runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing

--model: a model directory or any folder `from_pretrained` reads. What each result holds
follows its head (--head=auto takes the folder's): a classifier gives `label` and
`probabilities` (label order), a token classifier `tags` (one per whitespace word), a model
without a task head an `embedding` (SentenceEncoder: --pooling, --normalize). Every result
has `id`: --id_column's value, or `<file>:<line number>`. Inputs: text (one example a line,
.gz ok), JSON lines (.jsonl) or Parquet (.parquet) with --text_column. Empty lines are
skipped and counted, lines that are not UTF-8 too (or fatal: --undecodable_lines=fail), and a
line over --max_line_bytes is cut. Progress (lines done, lines/s, ETA) goes to stderr: a line
that updates itself on a terminal, else a line every --progress_every lines.
--output must be new or empty; shards appear only when complete, and a failed run leaves
nothing. The last line printed says what was written. Runs on a Dask cluster with
--beam_pipeline_options=runner=DaskRunner,dask_client_address=tcp://HOST:8786 (see
docs/corpus_inference.md). Needs `pip install 'bert_tf[beam]'`.
"""

import sys

from absl import flags  # noqa: E402

from bert_tf import cli  # First: quiets TensorFlow's C++ start-up logging.
from bert_tf.corpus_inference import readers  # noqa: E402
from bert_tf.corpus_inference.predictor import PredictSettings  # noqa: E402
from bert_tf.corpus_inference.writers import FORMATS  # noqa: E402

cli.define_flags(PredictSettings)
flags.DEFINE_string("input_file", None, "Input: comma-separated globs of text (.gz ok), .jsonl "
                    "or .parquet files (gs:// ok).")
flags.DEFINE_string("text_column", "text", "The text's key in .jsonl and .parquet inputs.")
flags.DEFINE_string("id_column", None, "The id's key there; default: <file>:<line number>.")
flags.DEFINE_integer("max_line_bytes", readers.MAX_LINE_BYTES, "A longer line is cut there while "
                     "it is read (counted); a longer JSON line stops the run.", lower_bound=1)
flags.DEFINE_integer("progress_every", 1000, "Without a terminal, a progress line (lines done, "
                     "lines/s, ETA) every this many lines; on one, a line that updates itself.",
                     lower_bound=1)
flags.DEFINE_enum("undecodable_lines", "skip", readers.UNDECODABLE_POLICIES,
                  "A line that is not UTF-8: skip it (counted, the first named) or stop the run.")
flags.DEFINE_string("output", None, "Output folder for the shards; must be new or empty.")
flags.DEFINE_enum("output_format", "parquet", FORMATS, "Shard format.")
flags.DEFINE_integer("num_shards", 1, "Shards the results are spread over.", lower_bound=1)
cli.define_beam_pipeline_options()
flags.mark_flags_as_required(["model", "input_file", "output"])
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.bare_console()  # progress lines as they are, without absl's prefix
    settings = cli.options_from_flags(PredictSettings)
    reader = readers.LineReader(FLAGS.text_column, FLAGS.id_column, FLAGS.undecodable_lines,
                                FLAGS.max_line_bytes)
    show_progress = _progress_display(sys.stderr.isatty(), FLAGS.progress_every)
    with cli.quiet_beam(FLAGS.beam_pipeline_options):
        from bert_tf.corpus_inference.corpus_predictions import predict_corpus  # pylint: disable=import-outside-toplevel  (Beam is an extra.)

        stats = predict_corpus(FLAGS.input_file, FLAGS.output, settings, FLAGS.output_format,
                               FLAGS.num_shards, reader, FLAGS.beam_pipeline_options,
                               show_progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)  # ends the line that updated itself
    print(f"{stats['lines']} lines ({stats['lines_per_second']:.1f} lines/s); "
          f"{stats['truncated_lines']} truncated, {stats['windowed_lines']} read as windows; "
          f"skipped {stats['empty_lines']} empty and {stats['undecodable_lines']} undecodable; "
          f"cut {stats['cut_lines']} over --max_line_bytes")
    print(f"wrote {stats['lines']} results in {len(stats['output_files'])} "
          f"{FLAGS.output_format} shard(s) to {FLAGS.output}")


def _progress_display(terminal, every):
    """A progress callback: one self-updating line on a terminal, else a line per `every`."""
    if terminal:
        return lambda progress: print(f"\r{progress}\033[K", end="", file=sys.stderr, flush=True)
    logged = [0]

    def log(progress):
        if progress.lines // every > logged[0]:
            logged[0] = progress.lines // every
            print(f"predicted {progress}", file=sys.stderr, flush=True)
    return log


if __name__ == "__main__":
    cli.run(main)
