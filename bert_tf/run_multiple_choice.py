"""Fine-tunes BERT for SWAG-style multiple choice (paper §4.4).

    python -m bert_tf.run_multiple_choice --data_dir=/data/swag --model_dir=/tmp/minilm \
        --do_train --do_eval --output_dir=/tmp/swag

--data_dir holds SWAG's train.csv, val.csv and test.csv (columns sent1, sent2, ending0..3,
label). Each choice is scored as the pair (sent1, sent2 + ending); the metric is accuracy.
"""

import os

from absl import app, flags, logging

from bert_tf.tasks import swag
from bert_tf.tasks.adapters import choice_adapter
from bert_tf.tasks.finetune_flags import define_finetune_flags, run_main
from bert_tf.tasks.table_reader import DataError
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

define_finetune_flags()
flags.DEFINE_string("train_file", None, "Training CSV (default: data_dir/train.csv).")
flags.DEFINE_string("dev_file", None, "Dev CSV (default: data_dir/val.csv).")
flags.DEFINE_string("test_file", None, "Test CSV without labels (default: data_dir/test.csv).")
FLAGS = flags.FLAGS


def _path(explicit, name):
    if explicit:
        return explicit
    if not FLAGS.data_dir:
        raise DataError(f"Give --data_dir or the file flag for {name}.")
    return os.path.join(FLAGS.data_dir, name)


def _build_adapter(config):
    preprocessor = BertPreprocessor(config.vocab(), lower_case=config.do_lower_case,
                                    seq_length=config.max_seq_length)
    train = swag.read_swag(_path(FLAGS.train_file, "train.csv")) if FLAGS.do_train else None
    dev = swag.read_swag(_path(FLAGS.dev_file, "val.csv")) if FLAGS.do_eval else None
    test = swag.read_swag(_path(FLAGS.test_file, "test.csv"), with_labels=False) \
        if FLAGS.do_predict else None
    return choice_adapter(preprocessor, train, dev, test, config.eval_batch_size,
                          config.seed)


def main(argv):
    del argv
    run_main("run_multiple_choice", _build_adapter)


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
