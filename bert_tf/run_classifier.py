"""Fine-tunes BERT on a GLUE task or a sentence(-pair) table (paper §4.1).

    python -m bert_tf.run_classifier --task_name=mrpc --data_dir=/data/glue/MRPC \
        --model_dir=/tmp/minilm --do_train --do_eval --do_predict --output_dir=/tmp/mrpc

GLUE (`cola sst2 mrpc stsb qqp mnli mnli_mismatched qnli rte wnli`) reads the GLUE TSV files
from --data_dir, or a prepared TFDS `glue/<task>` from --tfds_data_dir (never downloads).
Any other --task_name is a table task: --text_a_column [--text_b_column] --label_column of
.tsv/.csv/.jsonl files (--train_file etc., or data_dir/train.tsv ...). --do_predict writes the
GLUE submission file (`MRPC.tsv` ...) or test_results.tsv. A rerun resumes from the newest
checkpoint in --output_dir; the best dev epoch is kept in output_dir/model/.
"""

import os

from absl import flags  # noqa: E402

from bert_tf import finetuning_cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.checkpoints.model_dir import read_model_info  # noqa: E402
from bert_tf.finetuning import glue, sentence_task  # noqa: E402
from bert_tf.finetuning.adapters import classifier_adapter  # noqa: E402
from bert_tf.options import OptionError  # noqa: E402
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor  # noqa: E402

finetuning_cli.define_flags()
flags.adopt_module_key_flags(finetuning_cli)
flags.DEFINE_string("task_name", None, "A GLUE task, or a name for a table task.",
                    required=True)
flags.DEFINE_string("tfds_data_dir", None, "Read GLUE from this prepared TFDS data_dir instead.")
flags.DEFINE_string("text_a_column", None, "Table task: column of the first text.")
flags.DEFINE_string("text_b_column", None, "Table task: column of the second text, if any.")
flags.DEFINE_string("label_column", "label", "Table task: label column.")
flags.DEFINE_list("label_names", None, "Table task: labels in id order (default: sorted "
                  "training labels; a fine-tuned --model_dir's when not training).")
flags.DEFINE_bool("regression", False, "Table task: one float target (metrics pearson, spearman).")
flags.DEFINE_list("metrics", None, "Table task: metrics, the first picks the best epoch "
                  f"({', '.join(sentence_task.METRICS)}).")
flags.DEFINE_string("train_file", None, "Table task: training file (.tsv/.csv/.jsonl).")
flags.DEFINE_string("dev_file", None, "Table task: dev file.")
flags.DEFINE_string("test_file", None, "Table task: test file.")
FLAGS = flags.FLAGS


def _is_glue():
    return FLAGS.task_name.lower() in glue.GLUE_TASKS or not FLAGS.text_a_column


def _table_task(options):
    # Explicit files are made absolute so that --data_dir is not put in front of them.
    files = {split: os.path.abspath(getattr(FLAGS, f"{split}_file")) if getattr(
        FLAGS, f"{split}_file") else f"{split}.tsv" for split in sentence_task.SPLITS}
    label_names = FLAGS.label_names
    if label_names is None and options.model_dir and not FLAGS.do_train:
        label_names = read_model_info(options.model_dir).get("label_names")
    default_metrics = ("pearson", "spearman") if FLAGS.regression else ("accuracy",)
    return sentence_task.SentenceTask(
        name=FLAGS.task_name, text_a_column=FLAGS.text_a_column,
        text_b_column=FLAGS.text_b_column, label_column=FLAGS.label_column,
        label_names=tuple(label_names) if label_names else None, regression=FLAGS.regression,
        metrics=tuple(FLAGS.metrics or default_metrics), split_files=files)


def _task(options):
    return glue.glue_task(FLAGS.task_name) if _is_glue() else _table_task(options)


def _splits():
    """The splits this run reads: training labels are needed to name a table task's labels."""
    wanted = {"train": FLAGS.do_train, "dev": FLAGS.do_eval, "test": FLAGS.do_predict}
    return [split for split, needed in wanted.items() if needed]


def _check(options):
    """Task flags and the files to read, before any is read."""
    unknown = sorted(set(FLAGS.metrics or ()) - set(sentence_task.METRICS))
    if unknown:
        raise OptionError("metrics", ",".join(FLAGS.metrics),
                          f"unknown {unknown}; choose from {list(sentence_task.METRICS)}.")
    task = _task(options)
    if FLAGS.tfds_data_dir:
        return
    splits = _splits()
    if task.label_names is None and not task.regression and "train" not in splits:
        splits.insert(0, "train")
    for split in splits:
        own_flag = f"{split}_file"
        flag = own_flag if not _is_glue() and getattr(FLAGS, own_flag) else "data_dir"
        if flag == "data_dir" and not FLAGS.data_dir:
            raise OptionError("data_dir", None, f"is missing: give it (or --{own_flag} for a "
                              "table task, --tfds_data_dir for GLUE).")
        finetuning_cli.require_files({flag: sentence_task.split_path(task, FLAGS.data_dir or "",
                                                                      split)})


def _read(task, split):
    if FLAGS.tfds_data_dir:
        return glue.read_tfds_examples(task, split, FLAGS.tfds_data_dir)
    return sentence_task.read_examples(task, FLAGS.data_dir or "", split)


def _build_adapter(options):
    task = _task(options)
    if task.label_names is None and not task.regression:
        task = sentence_task.infer_label_names(task, FLAGS.data_dir or "")
    preprocessor = BertPreprocessor(options.vocab(), lower_case=options.do_lower_case,
                                    seq_length=options.max_seq_length, padding=options.padding)
    return classifier_adapter(
        task, preprocessor,
        train=_read(task, "train") if FLAGS.do_train else None,
        dev=_read(task, "dev") if FLAGS.do_eval else None,
        test=_read(task, "test") if FLAGS.do_predict else None,
        batch_size=options.eval_batch_size, seed=options.seed)


if __name__ == "__main__":
    finetuning_cli.run(_build_adapter, check=_check)
