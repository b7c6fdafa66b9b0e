"""TextClassifier: `BertClassifier` on raw text (single texts or pairs; regression with 1 class)."""

import keras
import numpy as np

from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.text_task import TextTask, check_preprocessor
from bert_tf.models import BertClassifier

# Hugging Face's `problem_type`s of a sequence classifier.
SINGLE_LABEL, MULTI_LABEL, REGRESSION = (
    "single_label_classification", "multi_label_classification", "regression")
PROBLEM_TYPES = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)


@keras.saving.register_keras_serializable(package="bert_tf")
class TextClassifier(TextTask, BertClassifier):
    """Classifies raw texts or text pairs: `predict` returns logits `[B, num_classes]`.

    keras-hub's `BertTextClassifier` with bert_tf's checkpoints and batches padded to their
    longest sequence. `num_classes=1` makes a regressor (STS-B): float labels, mean squared
    error. `problem_type="multi_label_classification"` (Hugging Face's) makes a multi-label
    classifier: labels are 0/1 rows `[B, num_classes]`, the loss sigmoid cross-entropy.
    Compiled with AdamW (learning rate 5e-5) and, for classes, sparse cross-entropy on
    logits and accuracy; call `compile()` to change them.

    Args:
      encoder: a `BertEncoder`.
      num_classes: number of classes; 1 for regression.
      preprocessor: a `BertPreprocessor`, or None to take token ids (keras-hub's convention).
      text_pair: whether `x` is `(texts_a, texts_b)` (GLUE pair tasks).
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.
      label_names: names of the classes, written to a model directory's `model_info.json`.
      problem_type: Hugging Face's: "single_label_classification", "multi_label_classification"
        or "regression"; None: regression for one class, else single-label.

    Example:
    >>> clf = TextClassifier.from_pretrained("all-MiniLM-L6-v2/", num_classes=2)  # doctest: +SKIP
    >>> clf.fit(["a fine film", "dull"], [1, 0], epochs=3)                        # doctest: +SKIP
    >>> clf.predict(["What an amazing movie!"]).shape                             # doctest: +SKIP
    (1, 2)
    """

    model_dir_head = "classifier"

    def __init__(self, encoder, num_classes, preprocessor=None, text_pair=False,
                 dropout_rate=None, label_names=None, problem_type=None, **kwargs):
        check_preprocessor(encoder, preprocessor)
        if label_names is not None and len(label_names) != num_classes:
            raise TaskInputError(f"{len(label_names)} label_names for num_classes={num_classes}.")
        problem_type = problem_type or (REGRESSION if num_classes == 1 else SINGLE_LABEL)
        if problem_type not in PROBLEM_TYPES or (problem_type == REGRESSION) != (num_classes == 1):
            raise TaskInputError(f"problem_type={problem_type!r} with num_classes={num_classes}: "
                                 f"regression takes 1 class, {SINGLE_LABEL} and {MULTI_LABEL} "
                                 "2 or more.")
        super().__init__(encoder, num_classes, dropout_rate=dropout_rate, **kwargs)
        self.preprocessor = preprocessor
        self.text_pair = bool(text_pair)
        self.label_names = None if label_names is None else [str(n) for n in label_names]
        self.problem_type = problem_type
        self.compile()

    @classmethod
    def from_pretrained(cls, folder, num_classes=None, text_pair=False, max_seq_length=None,
                        do_lower_case=None, padding="longest", **kwargs):
        """A classifier on the encoder of any checkpoint folder bert_tf reads.

        A model directory of a fine-tuned classifier (`save_model_dir`, `run_classifier`) or a
        Hugging Face `BertForSequenceClassification` folder gives its head back too (weights,
        label names, problem type) when `num_classes` is None or the same; another
        `num_classes` starts a new head, with a warning (`labelled_from_pretrained`).

        Args:
          folder: a model directory, a Hugging Face folder or a google-research checkpoint
            folder, or any other format of `checkpoints.registry`.
          num_classes: as the constructor's; None takes a fine-tuned folder's.
          text_pair: as the constructor's.
          max_seq_length: the longest packed sequence; default the folder's, else 128.
          do_lower_case: checked against the folder's casing; None takes it.
          padding: the preprocessor's: "longest" (default), "buckets" or "fixed".
          **kwargs: the constructor's (`dropout_rate`, `label_names`, `name`).

        Raises:
          FileNotFoundError, CheckpointError: an unreadable folder or contradicting casing.
          TaskInputError: `max_seq_length` above the model's position embeddings, or no
            `num_classes` for a folder without a fine-tuned classifier head.
        """
        return cls.labelled_from_pretrained(folder, num_classes, max_seq_length, do_lower_case,
                                            padding, text_pair=text_pair, **kwargs)

    def task_config(self):
        return {**super().task_config(), **self.text_task_config(),
                "label_names": self.label_names, "problem_type": self.problem_type}

    def default_loss(self):
        if self.num_classes == 1:
            return keras.losses.MeanSquaredError()
        if self.problem_type == MULTI_LABEL:
            return keras.losses.BinaryCrossentropy(from_logits=True)
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def default_metrics(self):
        if self.problem_type == MULTI_LABEL:
            return [keras.metrics.BinaryAccuracy(threshold=0.0)]  # on logits
        return [] if self.num_classes == 1 else [keras.metrics.SparseCategoricalAccuracy()]

    def check_labels(self, y):
        labels = np.asarray(y)
        if self.problem_type == MULTI_LABEL:
            if (labels.ndim != 2 or labels.shape[1] != self.num_classes
                    or labels.dtype.kind not in "iufb" or not np.isin(labels, (0, 1)).all()):
                raise TaskInputError(f"A multi-label classifier takes rows of {self.num_classes} "
                                     "0/1 values, one per class; `y` has shape "
                                     f"{labels.shape} and dtype {labels.dtype}.")
            return labels.astype(np.float32)
        if labels.ndim != 1:
            raise TaskInputError(f"`y` must be one label per text; its shape is {labels.shape}.")
        if self.num_classes == 1:
            if labels.dtype.kind not in "iuf":
                raise TaskInputError("A regressor (num_classes=1) takes numeric labels; `y` "
                                     f"holds {labels.dtype} values such as {labels[:1]}.")
            return labels.astype(np.float32)
        if labels.dtype.kind not in "iu":
            raise TaskInputError(
                f"`y` must hold integer class ids 0..{self.num_classes - 1}; it holds "
                f"{labels.dtype} values such as {labels[:1]}. Map names to ids first.")
        bad = np.flatnonzero((labels < 0) | (labels >= self.num_classes))
        if bad.size:
            raise TaskInputError(f"y[{bad[0]}]={labels[bad[0]]} is outside 0.."
                                 f"{self.num_classes - 1} (num_classes={self.num_classes}).")
        return labels.astype(np.int32)

    def check_label_spec(self, spec):
        integer = spec.dtype.is_integer
        if self.problem_type == MULTI_LABEL:
            numeric = integer or spec.dtype.is_floating or spec.dtype.is_bool
            if not numeric or spec.shape.rank != 2:
                raise TaskInputError(f"A multi-label classifier's labels must be 0/1 rows "
                                     f"[B, {self.num_classes}]; they are {spec}.")
            return
        if self.num_classes > 1 and not integer:
            raise TaskInputError(f"The dataset's labels must be integer class ids; they are "
                                 f"{spec.dtype.name}.")
        if self.num_classes == 1 and not (integer or spec.dtype.is_floating):
            raise TaskInputError(f"A regressor's labels must be numbers; they are "
                                 f"{spec.dtype.name}.")

    def model_dir_extras(self):
        if self.num_classes == 1:
            return {}
        extras = {"label_names": self.label_names or [str(i) for i in range(self.num_classes)]}
        if self.problem_type == MULTI_LABEL:
            extras["problem_type"] = MULTI_LABEL
        return extras

    def export_kwargs(self):
        return {"text_pair": self.text_pair}
