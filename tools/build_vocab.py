r"""Learns a WordPiece vocab.txt from text files: words counted on Beam, then tf-text's learner.

Words are split and normalised exactly as bert_tf's tokenizer does, so the vocab round-trips.
The counts (`word<TAB>count`, one line per distinct word) are kept in --counts_file, to learn
other sizes from. Needs `pip install 'bert_tf[beam]'`.

  python tools/build_vocab.py --input_file='corpus/*.txt' --output_file=/tmp/vocab.txt \
      --vocab_size=8000 --do_lower_case \
      --beam_pipeline_options=direct_num_workers=2,direct_running_mode=multi_processing
"""

from absl import (
    flags,  # noqa: E402
    logging,  # noqa: E402
)

from bert_tf import (
    cli,  # First: quiets TensorFlow's C++ start-up logging.
    errors,  # noqa: E402
)
from bert_tf.tokenization import vocab_learner  # noqa: E402

flags.DEFINE_string("input_file", None,
                    "Input text: comma-separated globs, one text per line (.gz, gs:// ok).")
flags.DEFINE_string("output_file", None, "Where to write vocab.txt.")
flags.DEFINE_string("counts_file", None, "Where the word counts go (default: "
                    "<output_file>.counts.tsv); the Beam workers write it, so on Dataflow a gs:// "
                    "path.")
flags.DEFINE_integer("vocab_size", 30522, "Largest vocab size (the learner lands up to 5% below).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased vocab).")
flags.DEFINE_integer("num_unused", 100, "[unusedN] slots reserved after [PAD].")
cli.define_beam_pipeline_options()
flags.mark_flags_as_required(["input_file", "output_file"])
FLAGS = flags.FLAGS


def main(argv):
    del argv
    try:
        with cli.quiet_beam(FLAGS.beam_pipeline_options):  # Also Beam's import-time warnings.
            from bert_tf.data.records import beam_vocab  # pylint: disable=import-outside-toplevel  (Beam is an extra.)

            vocab = beam_vocab.learn_vocab(FLAGS.input_file, FLAGS.counts_file
                                           or f"{FLAGS.output_file}.counts.tsv", FLAGS.vocab_size,
                                           lower_case=FLAGS.do_lower_case,
                                           num_unused=FLAGS.num_unused,
                                           beam_pipeline_options=FLAGS.beam_pipeline_options)
    except ValueError as error:  # no files or no words: one line, like UserError
        raise errors.UserError(str(error)) from None
    vocab_learner.write_vocab(vocab, FLAGS.output_file)
    logging.info("Wrote %d tokens to %s", len(vocab), FLAGS.output_file)


if __name__ == "__main__":
    cli.run(main)
