"""The nine GLUE tasks: files, columns, labels, metrics, TFDS names and submission files.

Column names are those of the GLUE TSV headers (CoLA's train/dev files have none; we name their
columns). Label orders follow google-research/bert's processors, so its fine-tuned heads keep
their meaning; TFDS label ids are mapped through the TFDS label names.
"""

import csv
import os

import numpy as np
import tensorflow as tf

from bert_tf.errors import require_extra
from bert_tf.finetuning.sentence_task import SentenceExamples, SentenceTask
from bert_tf.finetuning.table_reader import DataError
from bert_tf.options import OptionError

_COLA_COLUMNS = ("source", "label", "original_label", "sentence")
_GLUE_PAIR_FILES = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}


def _task(name, submission, tfds, a, b=None, labels=("0", "1"), label="label",
          metrics=("accuracy",), files=None, tfds_columns=None, **kwargs):
    return SentenceTask(
        name=name, text_a_column=a, text_b_column=b, label_column=label,
        label_names=labels, metrics=metrics, split_files=dict(files or _GLUE_PAIR_FILES),
        submission_name=submission, tfds_name=f"glue/{tfds}",
        tfds_columns=tfds_columns or (a, b), **kwargs)


_MNLI_LABELS = ("contradiction", "entailment", "neutral")
_NLI_LABELS = ("entailment", "not_entailment")

GLUE_TASKS = {
    "cola": _task("cola", "CoLA", "cola", "sentence", metrics=("matthews_corrcoef", "accuracy"),
                  fieldnames={"train": _COLA_COLUMNS, "dev": _COLA_COLUMNS},
                  tfds_columns=("sentence", None)),
    "sst2": _task("sst2", "SST-2", "sst2", "sentence", tfds_columns=("sentence", None)),
    "mrpc": _task("mrpc", "MRPC", "mrpc", "#1 String", "#2 String", label="Quality",
                  metrics=("f1", "accuracy"), tfds_columns=("sentence1", "sentence2")),
    "stsb": _task("stsb", "STS-B", "stsb", "sentence1", "sentence2", labels=None,
                  label="score", metrics=("pearson", "spearman"), regression=True),
    "qqp": _task("qqp", "QQP", "qqp", "question1", "question2", label="is_duplicate",
                 metrics=("f1", "accuracy"), index_column="id"),
    "mnli": _task("mnli", "MNLI-m", "mnli", "sentence1", "sentence2", labels=_MNLI_LABELS,
                  label="gold_label", tfds_columns=("premise", "hypothesis"),
                  files={"train": "train.tsv", "dev": "dev_matched.tsv",
                         "test": "test_matched.tsv"},
                  tfds_splits={"train": "train", "dev": "validation_matched",
                               "test": "test_matched"}),
    "mnli_mismatched": _task(
        "mnli_mismatched", "MNLI-mm", "mnli", "sentence1", "sentence2", labels=_MNLI_LABELS,
        label="gold_label", tfds_columns=("premise", "hypothesis"),
        files={"train": "train.tsv", "dev": "dev_mismatched.tsv", "test": "test_mismatched.tsv"},
        tfds_splits={"train": "train", "dev": "validation_mismatched",
                     "test": "test_mismatched"}),
    "qnli": _task("qnli", "QNLI", "qnli", "question", "sentence", labels=_NLI_LABELS),
    "rte": _task("rte", "RTE", "rte", "sentence1", "sentence2", labels=_NLI_LABELS),
    "wnli": _task("wnli", "WNLI", "wnli", "sentence1", "sentence2"),
}
_ALIASES = {"sst-2": "sst2", "sts-b": "stsb", "mnli-m": "mnli", "mnli_matched": "mnli",
            "mnli-mm": "mnli_mismatched"}


def glue_task(name):
    """The `SentenceTask` of a GLUE task name (case-insensitive; `SST-2`, `MNLI-mm` accepted)."""
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in GLUE_TASKS:
        raise OptionError("task_name", name, f"not a GLUE task ({sorted(GLUE_TASKS)}); a table "
                          "task needs --text_a_column.")
    return GLUE_TASKS[key]


def read_tfds_examples(task, split, data_dir):
    """Reads a split of `glue/<task>` from an already prepared TFDS `data_dir` (no download).

    Raises:
      FileNotFoundError: the dataset is not prepared under `data_dir`.
    """
    tfds = require_extra("tensorflow_datasets", extra="tfds")

    builder = tfds.builder(task.tfds_name, data_dir=data_dir)
    if not builder.is_prepared():
        raise FileNotFoundError(
            f"TFDS dataset {task.tfds_name} is not prepared under {data_dir}; run "
            f"`tfds build {task.tfds_name} --data_dir={data_dir}` where there is internet, "
            "or pass the GLUE TSV files with --data_dir instead.")
    tfds_split = task.tfds_splits[split]
    dataset = builder.as_dataset(split=tfds_split)
    label_feature = builder.info.features["label"]
    columns = {name: [] for name in (*task.tfds_columns, "label", "idx") if name}
    for example in dataset.as_numpy_iterator():
        for name in columns:
            columns[name].append(example[name])
    a_column, b_column = task.tfds_columns
    decode = np.vectorize(lambda b: b.decode("utf-8"), otypes=[object])
    labels = None
    if split != "test":
        labels = np.asarray(columns["label"])
        if task.regression:
            labels = labels.astype(np.float32)
        else:
            mapping = np.array(_tfds_label_ids(task, label_feature.names))
            labels = mapping[labels].astype(np.int32)
    return SentenceExamples(
        text_a=list(decode(np.asarray(columns[a_column]))),
        text_b=list(decode(np.asarray(columns[b_column]))) if b_column else None,
        labels=labels, ids=[str(i) for i in columns["idx"]],
        source=f"tfds:{task.tfds_name}/{tfds_split}")


def _tfds_label_ids(task, tfds_names):
    """Our id of each TFDS label id: by name (MNLI's TFDS order differs from google-research's),
    else by number (TFDS names CoLA's "0"/"1" unacceptable/acceptable)."""
    if set(tfds_names) <= set(task.label_names):
        return [task.label_names.index(name) for name in tfds_names]
    return [task.label_names.index(str(i)) for i in range(len(tfds_names))]


def write_submission(task, examples, predictions, output_dir):
    """Writes GLUE's `<Task>.tsv` (`index<TAB>prediction`) and returns its path."""
    if task.submission_name is None:
        raise DataError(f"Task {task.name!r} has no GLUE submission file name.")
    if len(predictions) != len(examples):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} test examples.")
    path = os.path.join(output_dir, f"{task.submission_name}.tsv")
    tf.io.gfile.makedirs(output_dir)
    with tf.io.gfile.GFile(path, "w") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["index", "prediction"])
        for index, prediction in zip(examples.ids, predictions):
            value = f"{float(prediction):.3f}" if task.regression else \
                task.label_names[int(prediction)]
            writer.writerow([index, value])
    return path
