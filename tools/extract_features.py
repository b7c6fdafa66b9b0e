"""Writes BERT's per-token layer activations as google-research JSONL (paper §5.3).

    python tools/extract_features.py --model_dir=/tmp/minilm --input_file=input.txt \
        --output_file=features.jsonl --layers=-1,-2,-3,-4 --max_seq_length=128

--input_file has one example a line: `text` or `text_a ||| text_b`.
"""

import sys

from absl import app, flags, logging

from bert_tf.tasks.feature_extraction import extract_features, read_input_lines
from bert_tf.tasks.table_reader import DataError

flags.DEFINE_string("model_dir", None, "Model directory (bert_config.json, vocab.txt, checkpoint).")
flags.DEFINE_string("input_file", None, "Text, one example a line ('a ||| b' for pairs).")
flags.DEFINE_string("output_file", None, "Where the JSONL goes.")
flags.DEFINE_list("layers", ["-1", "-2", "-3", "-4"], "Encoder layers to write (-1: last).")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per example, [CLS] and [SEP] included.")
flags.DEFINE_integer("batch_size", 8, "Examples per forward pass.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text (uncased models).")
flags.mark_flags_as_required(["model_dir", "input_file", "output_file"])
FLAGS = flags.FLAGS


def main(argv):
    del argv
    try:
        count = extract_features(
            FLAGS.model_dir, read_input_lines(FLAGS.input_file), FLAGS.output_file,
            layers=[int(i) for i in FLAGS.layers], max_seq_length=FLAGS.max_seq_length,
            batch_size=FLAGS.batch_size, do_lower_case=FLAGS.do_lower_case)
    except (DataError, ValueError, FileNotFoundError) as error:
        logging.error("%s", error)
        sys.exit(f"extract_features: {error}")
    print(f"wrote {count} examples to {FLAGS.output_file}")


if __name__ == "__main__":
    app.run(main)
