"""Single-sentence and sentence-pair tasks (GLUE and user tables): examples, batches, metrics."""

import dataclasses
import os

import numpy as np

from bert_tf import metrics as metrics_lib
from bert_tf.finetuning.table_reader import DataError, read_rows
from bert_tf.finetuning.text_batches import text_batches
from bert_tf.layers.traced_call import traced_call

METRICS = {
    "accuracy": metrics_lib.accuracy,
    "f1": metrics_lib.f1_score,
    "matthews_corrcoef": metrics_lib.matthews_corrcoef,
    "pearson": metrics_lib.pearson,
    "spearman": metrics_lib.spearman,
}
SPLITS = ("train", "dev", "test")


@dataclasses.dataclass(frozen=True)
class SentenceTask:
    """Where a sentence(-pair) task's text and labels are, and how it is scored.

    Args:
      name: task name (`cola`, `mnli`, or a user name).
      text_a_column: column of the first sentence.
      text_b_column: column of the second sentence, or None for single-sentence tasks.
      label_column: column of the label (a name from `label_names`, or a number for regression).
      label_names: the labels in id order; None with `regression=False` means "infer from the
        training file" (sorted).
      regression: one float target (STS-B) instead of classes.
      metrics: names among accuracy, f1, matthews_corrcoef, pearson, spearman; the first is the
        one that picks the best checkpoint.
      split_files: file name of each split (`train`, `dev`, `test`) inside the data folder.
      fieldnames: column names for the splits whose files have no header line.
      index_column: the id column of the test file (GLUE submissions are keyed by it).
      submission_name: GLUE submission file stem (`CoLA` → `CoLA.tsv`), or None.
      tfds_name: TFDS dataset name (`glue/cola`), or None.
      tfds_splits: TFDS split of each of our splits.
      tfds_columns: TFDS feature names of (text_a, text_b).

    Example:
    >>> task = SentenceTask("news", text_a_column="text", split_files={"train": "train.jsonl"})
    """

    name: str
    text_a_column: str
    text_b_column: str | None = None
    label_column: str = "label"
    label_names: tuple | None = None
    regression: bool = False
    metrics: tuple = ("accuracy",)
    split_files: dict = dataclasses.field(default_factory=lambda: {
        "train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"})
    fieldnames: dict = dataclasses.field(default_factory=dict)
    index_column: str = "index"
    submission_name: str | None = None
    tfds_name: str | None = None
    tfds_splits: dict = dataclasses.field(default_factory=lambda: {
        "train": "train", "dev": "validation", "test": "test"})
    tfds_columns: tuple = ()

    @property
    def num_outputs(self):
        return 1 if self.regression else len(self.label_names)


@dataclasses.dataclass
class SentenceExamples:
    """Column-wise examples: texts, label ids (int32) or targets (float32), and ids."""

    text_a: list
    text_b: list | None
    labels: np.ndarray | None
    ids: list
    source: str

    def __len__(self):
        return len(self.text_a)


def split_path(task, data_dir, split):
    if split not in task.split_files:
        raise DataError(f"Task {task.name!r} has no {split!r} file; it has "
                        f"{sorted(task.split_files)}.")
    return os.path.join(data_dir, task.split_files[split])


def infer_label_names(task, data_dir):
    """The task with `label_names` set: given ones kept, else the sorted labels of `train`."""
    if task.regression or task.label_names is not None:
        return task
    path = split_path(task, data_dir, "train")
    rows = read_rows(path, [task.label_column], task.fieldnames.get("train"))
    names = sorted({str(row[task.label_column]) for _, row in rows})
    return dataclasses.replace(task, label_names=tuple(names))


def label_to_id(task, value, where):
    """The id of one label value (or its float for regression); `where` is `file:line`."""
    if task.regression:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise DataError(f"{where}: label {value!r} of regression task {task.name!r} is not "
                            "a number.") from None
    name = str(value)
    if name not in task.label_names:
        raise DataError(f"{where}: label {name!r} is not in the label list "
                        f"{list(task.label_names)} of task {task.name!r}.")
    return task.label_names.index(name)


def read_examples(task, data_dir, split):
    """Reads one split of `task` from its file in `data_dir`; the test split has no labels.

    Raises:
      DataError: missing/empty file, missing column or unknown label (file and line named).
    """
    path = split_path(task, data_dir, split)
    with_labels = split != "test"
    columns = [task.text_a_column] + ([task.text_b_column] if task.text_b_column else [])
    columns += [task.label_column] if with_labels else []
    rows = read_rows(path, columns, task.fieldnames.get(split))
    labels = None
    if with_labels:
        labels = np.array([label_to_id(task, row[task.label_column], f"{path}:{number}")
                           for number, row in rows],
                          dtype=np.float32 if task.regression else np.int32)
    return SentenceExamples(
        text_a=[str(row[task.text_a_column]) for _, row in rows],
        text_b=[str(row[task.text_b_column]) for _, row in rows] if task.text_b_column else None,
        labels=labels,
        ids=[str(row.get(task.index_column, i)) for i, (_, row) in enumerate(rows)],
        source=path)


def make_dataset(examples, preprocessor, batch_size, training=False, seed=0, skip_batches=0):
    """Batches of `(encoder inputs, labels)` (just the inputs for unlabeled examples).

    Tokenization runs in-graph: `preprocessor` (a `BertPreprocessor`) is mapped over batches;
    unless its padding is "fixed", training batches are sorted by length (`text_batches`).
    """
    texts = (examples.text_a,) if examples.text_b is None else (examples.text_a, examples.text_b)
    traced = traced_call(preprocessor)
    return text_batches(texts, examples.labels, len(examples),
                        lambda batch: traced(_segments(batch)), batch_size, training,
                        seed, skip_batches, padding=preprocessor.padding)


def _segments(texts):
    return texts[0] if len(texts) == 1 else tuple(texts)


def predictions_from_logits(task, logits):
    """Label ids (argmax) or regression targets from `[N, num_outputs]` logits."""
    logits = np.asarray(logits)
    return logits[:, 0] if task.regression else np.argmax(logits, axis=-1)


def compute_metrics(task, labels, predictions):
    """`{metric name: value}` for the task's metrics."""
    return {name: METRICS[name](labels, predictions) for name in task.metrics}
