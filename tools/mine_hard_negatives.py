r"""Adds hard negatives to (anchor, positive) pairs: each anchor's nearest other positives.

  python tools/mine_hard_negatives.py --model=all-MiniLM-L6-v2 --input_file=pairs.jsonl \
      --anchor_column=question --positive_column=answer --output_file=triplets.jsonl \
      --num_negatives=3 --range_min=10 --margin=0.05
  # a corpus too big for one process: embed through tools/predict.py's pipeline on Beam
  python tools/mine_hard_negatives.py ... \
      --beam_pipeline_options=runner=DirectRunner,direct_num_workers=2

As sentence-transformers' mine_hard_negatives ("top" sampling, triplets out): the corpus is
the pairs' distinct positives; an anchor's own positives and its own text are never its
negatives; --range_min/--range_max choose the candidate ranks, --margin and --max_score drop
near-duplicates (likely unlabelled positives). Each negative makes one row of --output_file
(.jsonl, .tsv or .csv) with the anchor, positive and --negative_column, ready for
`python -m bert_tf.run_sentence_embeddings --negative_column=negative`. Pairs with an empty
side are skipped and counted, as are pairs left without a negative. docs/embeddings.md.
"""

from absl import flags  # noqa: E402

from bert_tf import cli  # First: quiets TensorFlow's C++ start-up logging.
from bert_tf.corpus_inference import hard_negatives  # noqa: E402
from bert_tf.corpus_inference.predictor import PredictSettings  # noqa: E402
from bert_tf.errors import UserError  # noqa: E402
from bert_tf.file_io import refuse_existing  # noqa: E402
from bert_tf.finetuning.table_reader import file_format  # noqa: E402

cli.define_flags(hard_negatives.MiningOptions)
cli.define_beam_pipeline_options()
flags.DEFINE_string("model", None, "The embedding model: any checkpoint folder bert_tf reads.")
flags.DEFINE_string("input_file", None, "The pairs (.jsonl, .tsv or .csv with a header).")
flags.DEFINE_string("anchor_column", "anchor", "The anchors' (queries') column.")
flags.DEFINE_string("positive_column", "positive", "The positives' column.")
flags.DEFINE_string("negative_column", "negative", "The mined negatives' column in the output.")
flags.DEFINE_string("output_file", None, "The triplets (.jsonl, .tsv or .csv); must not exist.")
flags.DEFINE_integer("batch_size", 64, "Texts embedded per batch.", lower_bound=1)
flags.DEFINE_integer("max_seq_length", None, "Tokens per text (default: the model's).",
                     lower_bound=3)
flags.mark_flags_as_required(["model", "input_file", "output_file"])
FLAGS = flags.FLAGS


def main(argv):
    del argv  # cli.run refuses positional arguments
    options = cli.options_from_flags(hard_negatives.MiningOptions)
    options.depth()  # a --range_max that leaves no room, before any work
    file_format(FLAGS.output_file)
    refuse_existing(FLAGS.output_file, "output file", flag="output_file")
    columns = (FLAGS.anchor_column, FLAGS.positive_column, FLAGS.negative_column)
    if len(set(columns)) < 3:
        raise UserError(f"--anchor_column, --positive_column and --negative_column must differ; "
                        f"received {', '.join(columns)}.")
    pairs, skipped = hard_negatives.read_pairs(FLAGS.input_file, FLAGS.anchor_column,
                                               FLAGS.positive_column)
    if FLAGS.beam_pipeline_options:
        settings = PredictSettings(model=FLAGS.model, max_seq_length=FLAGS.max_seq_length,
                                   batch_size=FLAGS.batch_size)
        embed = hard_negatives.beam_embedder(settings, FLAGS.beam_pipeline_options)
        with cli.quiet_beam(FLAGS.beam_pipeline_options):
            rows, counts = hard_negatives.mine_hard_negatives(pairs, embed, options)
    else:
        embed = hard_negatives.in_process_embedder(FLAGS.model, FLAGS.batch_size,
                                                   FLAGS.max_seq_length)
        rows, counts = hard_negatives.mine_hard_negatives(pairs, embed, options)
    hard_negatives.write_triplets(FLAGS.output_file, rows, columns)
    print(f"wrote {FLAGS.output_file}: {counts['triplets']} triplets from {counts['pairs']} "
          f"pairs ({skipped} skipped for an empty side, {counts['pairs_without_negative']} "
          f"without a negative; candidates dropped: {counts['skipped_by_margin']} by --margin, "
          f"{counts['skipped_by_max_score']} by --max_score)")


if __name__ == "__main__":
    cli.run(main)
