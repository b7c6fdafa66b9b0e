"""Fine-tunes BERT for SWAG-style multiple choice (paper §4.4).

    python -m bert_tf.run_multiple_choice --data_dir=/data/swag --model_dir=/tmp/minilm \
        --do_train --do_eval --output_dir=/tmp/swag

--data_dir holds SWAG's train.csv, val.csv and test.csv (columns sent1, sent2, ending0..3,
label). Each choice is scored as the pair (sent1, sent2 + ending); the metric is accuracy.
"""

import os

from absl import flags  # noqa: E402

from bert_tf import finetuning_cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.finetuning import swag  # noqa: E402
from bert_tf.finetuning.adapters import choice_adapter  # noqa: E402
from bert_tf.options import OptionError  # noqa: E402
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor  # noqa: E402

finetuning_cli.define_flags()
flags.adopt_module_key_flags(finetuning_cli)
flags.DEFINE_string("train_file", None, "Training CSV (default: data_dir/train.csv).")
flags.DEFINE_string("dev_file", None, "Dev CSV (default: data_dir/val.csv).")
flags.DEFINE_string("test_file", None, "Test CSV without labels (default: data_dir/test.csv).")
FLAGS = flags.FLAGS
_DEFAULT_NAMES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


def _path(split):
    """(flag, path) of a split's CSV: its own flag, else data_dir/<SWAG's name>."""
    explicit = getattr(FLAGS, f"{split}_file")
    if explicit:
        return f"{split}_file", explicit
    if not FLAGS.data_dir:
        raise OptionError("data_dir", None, f"is missing: give it or --{split}_file.")
    return "data_dir", os.path.join(FLAGS.data_dir, _DEFAULT_NAMES[split])


def _splits():
    wanted = {"train": FLAGS.do_train, "dev": FLAGS.do_eval, "test": FLAGS.do_predict}
    return [split for split, needed in wanted.items() if needed]


def _check(options):
    for split in _splits():
        finetuning_cli.require_files(dict([_path(split)]))


def _build_adapter(options):
    preprocessor = BertPreprocessor(options.vocab(), lower_case=options.do_lower_case,
                                    seq_length=options.max_seq_length, padding=options.padding)
    data = {split: swag.read_swag(_path(split)[1], with_labels=split != "test")
            for split in _splits()}
    return choice_adapter(preprocessor, data.get("train"), data.get("dev"), data.get("test"),
                          options.eval_batch_size, options.seed)


if __name__ == "__main__":
    finetuning_cli.run(_build_adapter, check=_check)
