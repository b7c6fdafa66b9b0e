"""Fine-tunes BERT for SQuAD v1.1 / v2.0 question answering (paper §4.2, §4.3).

    python -m bert_tf.run_squad --model_dir=/tmp/minilm --train_file=train-v1.1.json \
        --predict_file=dev-v1.1.json --do_train --do_eval --do_predict --output_dir=/tmp/squad

Contexts longer than the room left by the question are read in windows every --doc_stride
tokens. --do_eval scores --predict_file with the official EM/F1 after every epoch;
--do_predict writes predictions.json, nbest_predictions.json and null_odds.json.
--version_2_with_negative handles unanswerable questions (answer "" when the null score beats
the best span by more than --null_score_diff_threshold). --tfds_data_dir reads a prepared
TFDS squad/v1.1 or squad/v2.0 (train / validation splits) instead of the JSON files.
"""

from absl import flags  # noqa: E402

from bert_tf import finetuning_cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.finetuning import squad_features, squad_reader  # noqa: E402
from bert_tf.finetuning.adapters import squad_adapter  # noqa: E402
from bert_tf.options import OptionError  # noqa: E402
from bert_tf.tokenization.bert_tokenizer import BertTokenizer  # noqa: E402

finetuning_cli.define_flags(defaults={"max_seq_length": 384})
flags.adopt_module_key_flags(finetuning_cli)
flags.DEFINE_string("train_file", None, "SQuAD JSON for training (train-v1.1.json).")
flags.DEFINE_string("predict_file", None, "SQuAD JSON to evaluate / predict (dev-v1.1.json).")
flags.DEFINE_string("tfds_data_dir", None, "Read a prepared TFDS squad from here instead.")
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: some questions have no answer.")
flags.DEFINE_integer("doc_stride", 128, "Tokens between the starts of two context windows.",
                     lower_bound=1)
flags.DEFINE_integer("max_query_length", 64, "Question tokens kept (the rest is cut).",
                     lower_bound=1)
flags.DEFINE_integer("n_best_size", 20, "Start and end candidates per window, and n-best size.",
                     lower_bound=1)
flags.DEFINE_integer("max_answer_length", 30, "Longest answer in tokens.", lower_bound=1)
flags.DEFINE_float("null_score_diff_threshold", 0.0, "v2.0: predict no answer when null score "
                   "minus best span score exceeds this.")
FLAGS = flags.FLAGS


def _check(options):
    if options.max_seq_length <= FLAGS.max_query_length + 3:  # google-research's check
        raise OptionError("max_seq_length", options.max_seq_length,
                          f"leaves no room for context after --max_query_length="
                          f"{FLAGS.max_query_length} question tokens, [CLS] and two [SEP].")
    if not FLAGS.tfds_data_dir:
        files = {"train_file": FLAGS.do_train, "predict_file": FLAGS.do_eval or FLAGS.do_predict}
        for flag in (flag for flag, needed in files.items() if needed):
            if not FLAGS[flag].value:
                raise OptionError(flag, None, "is required here (or --tfds_data_dir).")
            finetuning_cli.require_files({flag: FLAGS[flag].value})


def _data(split, path, is_training):
    if FLAGS.tfds_data_dir:
        tfds_split = "train" if split == "train" else "validation"
        data = squad_reader.tfds_squad_data(tfds_split, FLAGS.tfds_data_dir,
                                            FLAGS.version_2_with_negative)
        source = f"tfds:{tfds_split}"
    else:
        data, source = squad_reader.load_squad_json(path), path
    examples, _ = squad_reader.parse_squad_examples(data, is_training,
                                                    FLAGS.version_2_with_negative, source)
    return examples, data


def _build_adapter(options):
    tokenizer = BertTokenizer(options.vocab(), lower_case=options.do_lower_case)

    def featurize(examples, is_training):
        return squad_features.convert_examples_to_features(
            examples, tokenizer, options.max_seq_length, FLAGS.doc_stride,
            FLAGS.max_query_length, is_training)

    train_features = eval_set = None
    if FLAGS.do_eval or FLAGS.do_predict:  # read first: a bad file stops before the long part
        examples, data = _data("predict", FLAGS.predict_file, False)
        eval_set = (examples, featurize(examples, False), data)
    if FLAGS.do_train:
        train_features = featurize(_data("train", FLAGS.train_file, True)[0], True)
    return squad_adapter(
        train_features, eval_set if FLAGS.do_eval else None,
        eval_set if FLAGS.do_predict else None, FLAGS.version_2_with_negative,
        FLAGS.n_best_size, FLAGS.max_answer_length, FLAGS.null_score_diff_threshold,
        options.eval_batch_size, options.seed, options.padding)


if __name__ == "__main__":
    finetuning_cli.run(_build_adapter, check=_check)
