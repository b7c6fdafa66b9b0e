r"""Learns a WordPiece vocab.txt from text files with tensorflow-text's learner.

Words are split and normalised exactly as bert_tf's tokenizer does, so the vocab round-trips:

  python tools/build_vocab.py --input_file='corpus/*.txt' --output_file=/tmp/vocab.txt \
      --vocab_size=8000 --do_lower_case
"""

from absl import app
from absl import flags
from absl import logging
import tensorflow as tf

from bert_tf.tokenization import vocab_learner

flags.DEFINE_string("input_file", None, "Input text: comma-separated globs, one text per line.")
flags.DEFINE_string("output_file", None, "Where to write vocab.txt.")
flags.DEFINE_integer("vocab_size", 30522, "Largest vocab size (the learner lands up to 5% below).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased vocab).")
flags.DEFINE_integer("num_unused", 100, "[unusedN] slots reserved after [PAD].")
flags.mark_flags_as_required(["input_file", "output_file"])
FLAGS = flags.FLAGS


def main(argv):
    del argv
    files = [f for pattern in FLAGS.input_file.split(",")
             for f in sorted(tf.io.gfile.glob(pattern))]
    if not files:
        logging.error("--input_file=%s matches no file.", FLAGS.input_file)
        raise SystemExit(1)
    lines = tf.data.TextLineDataset(files)
    try:
        vocab = vocab_learner.learn_vocab(lines, FLAGS.vocab_size, lower_case=FLAGS.do_lower_case,
                                          num_unused=FLAGS.num_unused)
    except ValueError as error:
        logging.error("%s", error)
        raise SystemExit(1)
    vocab_learner.write_vocab(vocab, FLAGS.output_file)
    logging.info("Wrote %d tokens to %s", len(vocab), FLAGS.output_file)


if __name__ == "__main__":
    app.run(main)
