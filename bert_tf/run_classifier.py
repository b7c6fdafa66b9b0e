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

from absl import app, flags, logging

from bert_tf.checkpoints.model_dir import read_model_info
from bert_tf.tasks import glue, sentence_task
from bert_tf.tasks.adapters import classifier_adapter
from bert_tf.tasks.finetune_flags import define_finetune_flags, run_main
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

define_finetune_flags()
flags.DEFINE_string("task_name", None, "A GLUE task, or a name for a table task.")
flags.DEFINE_string("tfds_data_dir", None, "Read GLUE from this prepared TFDS data_dir instead.")
flags.DEFINE_string("text_a_column", None, "Table task: column of the first text.")
flags.DEFINE_string("text_b_column", None, "Table task: column of the second text, if any.")
flags.DEFINE_string("label_column", "label", "Table task: label column.")
flags.DEFINE_list("label_names", None, "Table task: labels in id order (default: sorted "
                  "training labels; a fine-tuned --model_dir's when not training).")
flags.DEFINE_bool("regression", False, "Table task: one float target (metrics pearson, spearman).")
flags.DEFINE_list("metrics", None, "Table task: metrics, the first picks the best epoch "
                  "(accuracy, f1, matthews_corrcoef, pearson, spearman).")
flags.DEFINE_string("train_file", None, "Table task: training file (.tsv/.csv/.jsonl).")
flags.DEFINE_string("dev_file", None, "Table task: dev file.")
flags.DEFINE_string("test_file", None, "Table task: test file.")
flags.mark_flag_as_required("task_name")
FLAGS = flags.FLAGS


def _table_task(config):
    if not FLAGS.text_a_column:
        raise ValueError(f"--task_name={FLAGS.task_name!r} is not a GLUE task "
                         f"({sorted(glue.GLUE_TASKS)}); a table task needs --text_a_column.")
    files = {split: getattr(FLAGS, f"{split}_file") or os.path.join(FLAGS.data_dir or "",
                                                                   f"{split}.tsv")
             for split in sentence_task.SPLITS}
    label_names = FLAGS.label_names
    if label_names is None and config.model_dir and not FLAGS.do_train:
        label_names = read_model_info(config.model_dir).get("label_names")
    default_metrics = ("pearson", "spearman") if FLAGS.regression else ("accuracy",)
    metrics = tuple(FLAGS.metrics or default_metrics)
    return sentence_task.SentenceTask(
        name=FLAGS.task_name, text_a_column=FLAGS.text_a_column,
        text_b_column=FLAGS.text_b_column, label_column=FLAGS.label_column,
        label_names=tuple(label_names) if label_names else None, regression=FLAGS.regression,
        metrics=metrics, split_files=files)


def _read(task, split):
    if FLAGS.tfds_data_dir:
        return glue.read_tfds_examples(task, split, FLAGS.tfds_data_dir)
    return sentence_task.read_examples(task, FLAGS.data_dir or "", split)


def _build_adapter(config):
    is_glue = FLAGS.task_name.lower() in glue.GLUE_TASKS or not FLAGS.text_a_column
    task = glue.glue_task(FLAGS.task_name) if is_glue else _table_task(config)
    if task.label_names is None and not task.regression:
        task = sentence_task.infer_label_names(task, FLAGS.data_dir or "")
    preprocessor = BertPreprocessor(config.vocab(), lower_case=config.do_lower_case,
                                    seq_length=config.max_seq_length)
    return classifier_adapter(
        task, preprocessor,
        train=_read(task, "train") if FLAGS.do_train else None,
        dev=_read(task, "dev") if FLAGS.do_eval else None,
        test=_read(task, "test") if FLAGS.do_predict else None,
        batch_size=config.eval_batch_size, seed=config.seed)


def main(argv):
    del argv
    run_main("run_classifier", _build_adapter)


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
