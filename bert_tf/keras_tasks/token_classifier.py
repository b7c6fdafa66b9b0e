"""TokenClassifier: `BertTokenClassifier` on words; a label per word (NER, paper §5.3)."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.data.autotune import without_autotune
from bert_tf.finetuning import conll
from bert_tf.finetuning.length_bucketing import length_sorted_batches, trim_to_longest
from bert_tf.keras_tasks.text_inputs import DEFAULT_BATCH_SIZE, TaskInputError
from bert_tf.keras_tasks.text_task import TextTask, check_preprocessor
from bert_tf.layers.traced_call import traced_call
from bert_tf.models import BertTokenClassifier


def _word_lists(x):
    """`x` (word lists, or whitespace-separated texts) as lists of words, checked."""
    if isinstance(x, (str, bytes)):
        raise TaskInputError(f"`x` is one text; pass a list of texts or word lists, e.g. [{x!r}].")
    if not isinstance(x, (list, tuple, np.ndarray)):
        raise TaskInputError("`x` must be a list of word lists or of texts; received "
                             f"{type(x).__name__}.")
    sentences = []
    for index, item in enumerate(x):
        words = item.split() if isinstance(item, str) else item
        if not isinstance(words, (list, tuple, np.ndarray)) or not all(
                isinstance(word, str) for word in words):
            raise TaskInputError(f"x[{index}] is {type(item).__name__}, not a text or a list "
                                 "of words.")
        if not len(words):
            raise TaskInputError(f"x[{index}] has no words; drop it or give it words.")
        sentences.append(list(words))
    return sentences


def _is_string(spec):
    return isinstance(spec, (tf.TensorSpec, tf.RaggedTensorSpec)) and spec.dtype == tf.string


def _rows(batch):
    """A dense or ragged batch as Python rows, bytes decoded: texts or lists of words/labels."""
    rows = batch.to_list() if isinstance(batch, tf.RaggedTensor) else batch.numpy().tolist()

    def decoded(item):
        if isinstance(item, bytes):
            return item.decode("utf-8")
        return [decoded(i) for i in item] if isinstance(item, list) else item

    return [decoded(row) for row in rows]


def read_word_dataset(dataset):
    """`(x, y or None, batch size)` as lists, read from a batched dataset of words.

    Elements: `words` or `(words, labels)`; words string `[B, (W)]` (ragged or dense, e.g.
    `ragged_batch`) or whitespace texts `[B]`; labels int `[B, (W)]`. The dataset is read
    whole: the word-to-piece alignment is `tasks.conll`'s (run_ner's), which works on lists.

    Raises:
      TaskInputError: other elements, unbatched words, or an infinite (repeated) dataset.
    """
    spec = dataset.element_spec
    x_spec, y_spec = spec if isinstance(spec, tuple) and len(spec) == 2 else (spec, None)
    if y_spec is not None and y_spec.shape.rank == 1 and _is_string(x_spec):
        raise TaskInputError("Dataset words must come in batches of shape [B, (words)]; "
                             f"they are {x_spec}. Batch first, e.g. dataset.ragged_batch(32).")
    if (not _is_string(x_spec) or x_spec.shape.rank not in (1, 2)
            or (y_spec is not None and (not y_spec.dtype.is_integer or y_spec.shape.rank != 2))):
        raise TaskInputError(
            "A TokenClassifier dataset must yield words (string [B, (words)], e.g. "
            "ragged_batch, or whitespace texts [B]) or (words, label ids int [B, (words)]); "
            f"its elements are {spec}.")
    if dataset.cardinality() == tf.data.INFINITE_CARDINALITY:
        raise TaskInputError("The dataset of words repeats forever; TokenClassifier reads it "
                             "whole, so pass it without repeat() and set epochs= instead.")
    words, labels, batch_size = [], [], None
    for element in dataset:
        batch_words = _rows(element[0] if y_spec is not None else element)
        batch_size = batch_size or len(batch_words)
        words += batch_words
        labels += _rows(element[1]) if y_spec is not None else []
    return words, labels if y_spec is not None else None, batch_size


def _trimmed(inputs, *label_ids):
    """The batch cut to its longest sentence as run_ner's batches are (`trim_to_longest`),
    the label ids `[B, S]` alike."""
    if not label_ids:
        return (trim_to_longest(inputs),)
    trimmed = trim_to_longest({**inputs, "label_ids": label_ids[0]})
    return {name: trimmed[name] for name in inputs}, trimmed["label_ids"]


@keras.saving.register_keras_serializable(package="bert_tf")
class TokenClassifier(TextTask, BertTokenClassifier):
    """Labels each word: `fit(word_lists, label_id_lists)`, `predict(word_lists)` -> a label
    per word (ids, or names when `label_names` are given).

    Texts may be given as whitespace-separated strings, and words and labels as a batched
    `tf.data.Dataset` (`read_word_dataset`). As in the paper (§5.3) and
    `run_ner.py`, each word's label sits on its first WordPiece; the other pieces are ignored
    by the loss (`tasks.conll` does the alignment). Compiled with AdamW at 5e-5 and sparse
    cross-entropy over the labelled pieces; `compile()` overrides.

    Args:
      encoder: a `BertEncoder`.
      num_classes: number of labels.
      preprocessor: a `BertPreprocessor` (its tokenizer, casing and `seq_length` are used).
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.
      label_names: names of the labels; `predict` then returns names.

    Example:
    >>> tagger = TokenClassifier.from_pretrained(  # doctest: +SKIP
    ...     "bert-base-cased/", num_classes=3, label_names=["O", "B-PER", "I-PER"])
    >>> tagger.fit([["Ada", "Lovelace", "wrote"]], [[1, 2, 0]], epochs=3)        # doctest: +SKIP
    >>> tagger.predict(["Ada Lovelace wrote"])                                      # doctest: +SKIP
    [['B-PER', 'I-PER', 'O']]
    """

    model_dir_head = "token_classifier"

    def __init__(self, encoder, num_classes, preprocessor=None, dropout_rate=None,
                 label_names=None, **kwargs):
        check_preprocessor(encoder, preprocessor)
        if label_names is not None and len(label_names) != num_classes:
            raise TaskInputError(f"{len(label_names)} label_names for num_classes={num_classes}.")
        super().__init__(encoder, num_classes, dropout_rate=dropout_rate, **kwargs)
        self.preprocessor = preprocessor
        self.text_pair = False
        self.label_names = None if label_names is None else [str(n) for n in label_names]
        self.compile()

    @classmethod
    def from_pretrained(cls, folder, num_classes=None, max_seq_length=None, do_lower_case=None,
                        **kwargs):
        """A token classifier on the encoder of any checkpoint folder bert_tf reads, with a
        fine-tuned model directory's head and label names when `num_classes` is None or the
        same (see `TextClassifier.from_pretrained`); `kwargs`: the constructor's."""
        return cls.labelled_from_pretrained(folder, num_classes, max_seq_length, do_lower_case,
                                            **kwargs)

    def task_config(self):
        return {**super().task_config(),
                "preprocessor": self.text_task_config()["preprocessor"],
                "label_names": self.label_names}

    def default_loss(self):
        # Keras's `ignore_class` masks the unlabelled pieces and averages over the labelled
        # ones: the per-token mean of `tasks.adapters`' tagging loss, which run_ner.py uses.
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                          ignore_class=conll.IGNORE)

    def default_metrics(self):
        return None

    def _features(self, x, y=None):
        """`(word lists, conll features)`; label ids stand for themselves as label names."""
        words = _word_lists(x)
        if y is None:
            tags = [[0] * len(sentence) for sentence in words]
        else:
            tags = self.check_labels(y)
            if len(tags) != len(words):
                raise TaskInputError(f"`y` has {len(tags)} label lists for {len(words)} texts.")
            for index, (sentence, labels) in enumerate(zip(words, tags)):
                if len(labels) != len(sentence):
                    raise TaskInputError(f"y[{index}] has {len(labels)} labels for the "
                                         f"{len(sentence)} words of x[{index}].")
        sentences = conll.TaggedSentences(words, tags, source="x")
        return words, conll.convert_sentences_to_features(
            sentences, self.preprocessor.tokenizer, range(self.num_classes),
            self.preprocessor.seq_length)

    def check_labels(self, y):
        """`y` as lists of int label ids in range, or `TaskInputError` naming the first bad one."""
        checked = []
        for index, labels in enumerate(y):
            labels = np.asarray(labels)
            if labels.ndim != 1 or (labels.size and labels.dtype.kind not in "iu"):
                raise TaskInputError(f"y[{index}] must be a list of integer label ids 0.."
                                     f"{self.num_classes - 1}, one per word.")
            bad = np.flatnonzero((labels < 0) | (labels >= self.num_classes))
            if bad.size:
                raise TaskInputError(f"y[{index}][{bad[0]}]={labels[bad[0]]} is outside 0.."
                                     f"{self.num_classes - 1} (num_classes={self.num_classes}).")
            checked.append([int(label) for label in labels])
        return checked

    def _dataset(self, features, batch_size, shuffle=False, labels=True, group_by_length=False):
        entries = (features.model_inputs(),) + ((features.label_ids,) if labels else ())
        dataset = tf.data.Dataset.from_tensor_slices(entries)
        if shuffle:
            dataset = dataset.shuffle(len(features.label_ids))
        batch_size = batch_size or DEFAULT_BATCH_SIZE
        if group_by_length:
            dataset = length_sorted_batches(
                dataset, lambda window: tf.reduce_sum(window[0]["input_mask"], axis=1),
                batch_size, seed=0 if shuffle else None, count=len(features.label_ids))
        else:
            dataset = dataset.batch(batch_size)
        return without_autotune(dataset.map(_trimmed))

    def _word_batches(self, x, y=None, batch_size=None, shuffle=False, labels=True,
                      group_by_length=False):
        """`(word lists, conll features, their batched dataset)` of lists or a dataset."""
        if isinstance(x, tf.data.Dataset):
            if y is not None or batch_size is not None:
                raise TaskInputError("With a dataset, labels and batches come from the "
                                     "dataset: drop `y` and `batch_size`.")
            x, y, batch_size = read_word_dataset(x)
        words, features = self._features(x, y)
        return words, features, self._dataset(features, batch_size, shuffle, labels,
                                              group_by_length)

    def fit(self, x=None, y=None, batch_size=None, validation_data=None, shuffle=True,
            group_by_length=False, **kwargs):
        """Keras `fit` on word lists or texts with label-id lists, or on a dataset of them
        (`read_word_dataset`: read into memory, so `shuffle` and `group_by_length` apply to
        it as to lists); `validation_data`: `(words, labels)` or such a dataset.
        `group_by_length=True` batches sentences of like length (`data.length_bucketing`)."""
        if self._takes_ids(x):
            return super().fit(x, y, batch_size=batch_size, validation_data=validation_data,
                               shuffle=shuffle, **kwargs)
        data = self._word_batches(x, y, batch_size, shuffle, group_by_length=group_by_length)[2]
        if isinstance(validation_data, tf.data.Dataset):
            validation_data = self._word_batches(validation_data)[2]
        elif validation_data is not None:
            if len(validation_data) != 2:
                raise TaskInputError("validation_data must be (word lists, label lists) or a "
                                     "dataset of them.")
            validation_data = self._word_batches(*validation_data, batch_size=batch_size)[2]
        return super(TextTask, self).fit(data, validation_data=validation_data, shuffle=False,
                                         **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        if self._takes_ids(x):
            return super().evaluate(x, y, batch_size=batch_size, **kwargs)
        return super(TextTask, self).evaluate(self._word_batches(x, y, batch_size)[2], **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """Per-word labels (ids, or names with `label_names`) for raw words (lists or a dataset,
        as `fit` takes them); Keras's logits for ids. Words past `seq_length` WordPieces get
        label 0."""
        if self._takes_ids(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        words, features, batches = self._word_batches(x, batch_size=batch_size, labels=False)
        # Batches differ in width, so they are not concatenated: each row keeps its words.
        # Not `predict_on_batch`: under a MirroredStrategy every replica runs the whole batch
        # and their rows come back concatenated.
        forward = traced_call(self, training=False)
        best = [row for (inputs,) in batches for row in np.argmax(forward(inputs), axis=-1)]
        labels = [[int(i) for i in best[row][first_piece]]
                  + [0] * (len(sentence) - len(first_piece))
                  for row, (first_piece, sentence) in enumerate(zip(features.first_piece, words))]
        if self.label_names is None:
            return labels
        return [[self.label_names[i] for i in ids] for ids in labels]

    def model_dir_extras(self):
        # run_ner.py reads the names back to tag with this model directory.
        return {"label_names": self.label_names or [str(i) for i in range(self.num_classes)]}
