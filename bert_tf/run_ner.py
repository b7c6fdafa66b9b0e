"""Fine-tunes BERT for named entities on CoNLL column files (paper §5.3; CoNLL-2003, WNUT).

    python -m bert_tf.run_ner --model_dir=/tmp/minilm --data_dir=/data/conll2003 \
        --do_train --do_eval --output_dir=/tmp/ner

The data folder holds train.txt, dev.txt and test.txt (`word ... label` lines, blank lines
between sentences); --train_file etc. override them, and --dev_fraction carves a seeded dev
split out of a corpus without one. Labels go on each word's first WordPiece; the metric is
conlleval's entity-level F1. A rerun resumes from the newest checkpoint in --output_dir.
"""

import os

from absl import app, flags, logging

from bert_tf.checkpoints.model_dir import read_model_info
from bert_tf.tasks import conll
from bert_tf.tasks.adapters import tagger_adapter
from bert_tf.tasks.finetune_flags import define_finetune_flags, run_main
from bert_tf.tasks.table_reader import DataError
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

define_finetune_flags()
flags.DEFINE_string("train_file", None, "Training file (default: data_dir/train.txt).")
flags.DEFINE_string("dev_file", None, "Dev file (default: data_dir/dev.txt).")
flags.DEFINE_string("test_file", None, "Test file (default: data_dir/test.txt).")
flags.DEFINE_float("dev_fraction", 0.0, "Split this fraction of the training sentences off as "
                   "the dev set (seeded by --seed) instead of reading a dev file.")
flags.DEFINE_string("tfds_data_dir", None, "Read a prepared TFDS conll2003 from here instead "
                    "(splits train, dev, test; its tag names).")
flags.DEFINE_integer("label_column", -1, "Field holding the tag (default: the last).")
flags.DEFINE_list("label_names", None,
                  "Tag list in id order (default: the training tags, O first).")
FLAGS = flags.FLAGS


def _path(explicit, name):
    if explicit:
        return explicit
    if not FLAGS.data_dir:
        raise DataError(f"Give --data_dir or --{name}_file.")
    return os.path.join(FLAGS.data_dir, f"{name}.txt")


def _read(split, explicit):
    if FLAGS.tfds_data_dir:
        return conll.read_tfds_conll(split, FLAGS.tfds_data_dir)[0]
    return conll.read_conll(_path(explicit, split), FLAGS.label_column)


def _label_names(config):
    """--label_names, else those of a fine-tuned --model_dir when not training, else None."""
    if FLAGS.label_names:
        return tuple(FLAGS.label_names)
    if config.model_dir and not FLAGS.do_train:
        return tuple(read_model_info(config.model_dir).get("label_names") or ()) or None
    return None


def _build_adapter(config):
    tokenizer = BertTokenizer(config.vocab(), lower_case=config.do_lower_case)
    train = dev = test = None
    names = _label_names(config)
    if FLAGS.do_train or names is None:
        train = _read("train", FLAGS.train_file)
    if FLAGS.dev_fraction > 0:
        train, dev = conll.split_sentences(train, FLAGS.dev_fraction, seed=config.seed)
    elif FLAGS.do_eval:
        dev = _read("dev", FLAGS.dev_file)
    if FLAGS.do_predict:
        test = _read("test", FLAGS.test_file)
    if FLAGS.tfds_data_dir and names is None:
        names = conll.read_tfds_conll("train", FLAGS.tfds_data_dir)[1]
    names = names or conll.label_names_of(train)

    def featurize(sentences):
        if sentences is None:
            return None
        return sentences, conll.convert_sentences_to_features(
            sentences, tokenizer, names, config.max_seq_length)

    return tagger_adapter(names, featurize(train) if FLAGS.do_train else None,
                          featurize(dev), featurize(test), config.eval_batch_size,
                          config.seed)


def main(argv):
    del argv
    run_main("run_ner", _build_adapter)


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
