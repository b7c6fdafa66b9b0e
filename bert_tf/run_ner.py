"""Fine-tunes BERT for named entities on CoNLL column files (paper §5.3; CoNLL-2003, WNUT).

    python -m bert_tf.run_ner --model_dir=/tmp/minilm --data_dir=/data/conll2003 \
        --do_train --do_eval --output_dir=/tmp/ner

The data folder holds train.txt, dev.txt and test.txt (`word ... label` lines, blank lines
between sentences); --train_file etc. override them, and --dev_fraction carves a dev split
out of a corpus without one (seeded by --split_seed, so runs with different --seed share one
dev set). Labels go on each word's first WordPiece; the metric is conlleval's entity-level F1.
A rerun resumes from the newest checkpoint in --output_dir.
"""

import os

from absl import flags  # noqa: E402

from bert_tf import finetuning_cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.checkpoints.model_dir import read_model_info  # noqa: E402
from bert_tf.finetuning import conll  # noqa: E402
from bert_tf.finetuning.adapters import tagger_adapter  # noqa: E402
from bert_tf.options import OptionError  # noqa: E402
from bert_tf.tokenization.bert_tokenizer import BertTokenizer  # noqa: E402

finetuning_cli.define_flags()
flags.adopt_module_key_flags(finetuning_cli)
flags.DEFINE_string("train_file", None, "Training file (default: data_dir/train.txt).")
flags.DEFINE_string("dev_file", None, "Dev file (default: data_dir/dev.txt).")
flags.DEFINE_string("test_file", None, "Test file (default: data_dir/test.txt).")
flags.DEFINE_float("dev_fraction", 0.0, "Split this fraction (0 to below 1) of the training "
                   "sentences off as the dev set (seeded by --split_seed) instead of reading a "
                   "dev file.", lower_bound=0.0, upper_bound=1.0)
flags.DEFINE_integer("split_seed", 0, "Seed of the --dev_fraction split, apart from --seed so "
                     "that runs with different seeds score on the same dev sentences.")
flags.DEFINE_string("tfds_data_dir", None, "Read a prepared TFDS conll2003 from here instead "
                    "(splits train, dev, test; its tag names).")
flags.DEFINE_integer("label_column", -1, "Field holding the tag (default: the last; field 0 "
                     "is the word).")
flags.DEFINE_list("label_names", None,
                  "Tag list in id order (default: the training tags, O first).")
FLAGS = flags.FLAGS


def _label_names(options):
    """--label_names, else those of a fine-tuned --model_dir when not training, else None."""
    if FLAGS.label_names:
        return tuple(FLAGS.label_names)
    if options.model_dir and not FLAGS.do_train:
        return tuple(read_model_info(options.model_dir).get("label_names") or ()) or None
    return None


def _files(options):
    """{flag: path} of the CoNLL files this run reads."""
    needs_train = FLAGS.do_train or FLAGS.dev_fraction > 0 or _label_names(options) is None
    wanted = {"train": needs_train, "dev": FLAGS.do_eval and FLAGS.dev_fraction == 0,
              "test": FLAGS.do_predict}
    files = {}
    for split in (split for split, needed in wanted.items() if needed):
        explicit = getattr(FLAGS, f"{split}_file")
        if not explicit and not FLAGS.data_dir:
            raise OptionError("data_dir", None, f"is missing: give it or --{split}_file.")
        files[split] = (f"{split}_file", explicit) if explicit else \
            ("data_dir", os.path.join(FLAGS.data_dir, f"{split}.txt"))
    return files


def _check(options):
    if FLAGS.dev_fraction >= 1:
        raise OptionError("dev_fraction", FLAGS.dev_fraction, "must be below 1.")
    if not FLAGS.tfds_data_dir:
        for flag, path in _files(options).values():
            finetuning_cli.require_files({flag: path})


def _read(split, options):
    if FLAGS.tfds_data_dir:
        return conll.read_tfds_conll(split, FLAGS.tfds_data_dir)[0]
    return conll.read_conll(_files(options)[split][1], FLAGS.label_column)


def _build_adapter(options):
    tokenizer = BertTokenizer(options.vocab(), lower_case=options.do_lower_case)
    train = dev = test = None
    names = _label_names(options)
    if FLAGS.do_train or FLAGS.dev_fraction > 0 or names is None:
        train = _read("train", options)
    if FLAGS.dev_fraction > 0:
        train, dev = conll.split_sentences(train, FLAGS.dev_fraction, seed=FLAGS.split_seed)
    elif FLAGS.do_eval:
        dev = _read("dev", options)
    if FLAGS.do_predict:
        test = _read("test", options)
    if FLAGS.tfds_data_dir and names is None:
        names = conll.read_tfds_conll("train", FLAGS.tfds_data_dir)[1]
    names = names or conll.label_names_of(train)

    def featurize(sentences):
        if sentences is None:
            return None
        return sentences, conll.convert_sentences_to_features(
            sentences, tokenizer, names, options.max_seq_length)

    return tagger_adapter(names, featurize(train) if FLAGS.do_train else None,
                          featurize(dev), featurize(test), options.eval_batch_size,
                          options.seed, options.padding)


if __name__ == "__main__":
    finetuning_cli.run(_build_adapter, check=_check)
