"""A Keras task model on batches of corpus lines: what `tools/predict.py` computes per line.

`Predictor` loads the model a folder holds once (`from_pretrained`), by its head:
- classifier (`TextClassifier`): `label` (the most probable class's name; for a multi-label
  model the names of those at or above 0.5) and `probabilities` in label order (softmax;
  sigmoid per label for multi-label; a regressor gives `score` instead);
- token classifier (`TokenClassifier`): `tags`, one label name per whitespace word;
- encoder (a folder without a task head, or `head="encoder"`): `embedding`, what
  `SentenceEncoder.from_pretrained(folder).predict` gives (`pooling`, `normalize` override).
Each batch is tokenized once; its windows (`windows`: one per line unless
`long_lines="windows"`) are sorted by length and run `batch_size` at a time, so a batch holds
lines of like length and packed inference has little padding to drop. Results come back in
the order of the lines, equal to the model's `predict` on the same texts.

Example:
>>> predictor = Predictor(PredictSettings(model="fine_tuned_sst2/"))   # doctest: +SKIP
>>> predictor.predict([Line("a", "What a film!", (0, 1))])[0].record   # doctest: +SKIP
{'id': 'a', 'label': 'positive', 'probabilities': [0.03, 0.97]}
"""

import collections
import dataclasses

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints.registry import describe_folder
from bert_tf.corpus_inference import windows
from bert_tf.keras_tasks import SentenceEncoder, TextClassifier, TokenClassifier
from bert_tf.keras_tasks.sentence_encoder import POOLINGS
from bert_tf.keras_tasks.text_classifier import MULTI_LABEL
from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.text_task import check_seq_length
from bert_tf.options import check_options, option

HEADS = ("auto", "classifier", "token_classifier", "encoder")
LONG_LINES = ("truncate", "windows")
_TASKS = {"classifier": TextClassifier, "token_classifier": TokenClassifier}


@dataclasses.dataclass(frozen=True)
class PredictSettings:
    """What to run over the corpus: the model-side flags of `tools/predict.py`."""

    model: str = option(None, "Model directory, Hugging Face or google-research folder.",
                        required=True)
    head: str = option("auto", "What to compute: auto takes the folder's own task head "
                       "(classifier, token_classifier), else encoder (embeddings).", choices=HEADS)
    max_seq_length: int = option(None, "WordPieces per model input, [CLS] and [SEP] included "
                                 "(default: the folder's, else 128).", lower_bound=3)
    batch_size: int = option(128, "Inputs per forward pass (lines of like length are batched "
                             "together).", lower_bound=1)
    pooling: str = option(None, "Embeddings: how tokens are pooled (default: as "
                          "SentenceEncoder.from_pretrained pools for the folder: mean).",
                          choices=POOLINGS)
    normalize: bool = option(None, "Embeddings: unit L2 norm (default: as "
                             "SentenceEncoder.from_pretrained does for the folder: yes).")
    long_lines: str = option(
        "truncate", "A line longer than --max_seq_length: truncate (counted) or windows: "
        "overlapping windows --doc_stride pieces apart, pooled into one result (the mean of the "
        "windows' embeddings, renormalized with --normalize, or of their probabilities).",
        choices=LONG_LINES)
    doc_stride: int = option(64, "--long_lines=windows: WordPieces between window starts "
                             "(google-research's doc_stride).", lower_bound=1)


class Prediction(collections.namedtuple("Prediction", ["record", "order", "long"])):
    """One line's result: `record` (`id` and the head's fields), the line's `order`, and
    whether the line was longer than the model reads at once (truncated, or windows)."""


def resolve_head(description, head="auto"):
    """The head to run: the folder's own task head for "auto", else `head` if it holds it.

    Args:
      description: the folder's `FolderDescription` (`registry.describe_folder`).

    Raises:
      TaskInputError: a task head asked of a folder that holds none (or another).
    """
    model = description.path
    held = description.head
    held = held if held in _TASKS else "encoder"
    if head == "auto":
        return held
    if head in (held, "encoder"):  # every folder holds an encoder
        return head
    raise TaskInputError(f"--model={model} holds no fine-tuned {head} head (it holds "
                         f"{'an encoder only' if held == 'encoder' else 'a ' + held}); "
                         f"pass --head={held} or a model fine-tuned as a {head}.")


def check_settings(settings):
    """The head `settings` run, after every check that needs no model built (seconds saved).

    The options, the folder's layout and its head (`describe_folder`: small files only), a
    `max_seq_length` above the position table where the folder tells its size, and long-line
    windows on a token classifier: what the launcher refuses before any work, so the model is
    built once, by each worker (`model_handler.TaskModelHandler.load_model`).

    Raises:
      TaskInputError: a head the folder lacks, a `max_seq_length` above the model's
        positions, or windows on a token classifier.
      CheckpointError, FileNotFoundError: not a folder bert_tf reads.
    """
    check_options(settings)
    description = describe_folder(settings.model)
    head = resolve_head(description, settings.head)
    if settings.max_seq_length and description.max_position_embeddings:
        check_seq_length(settings.max_seq_length, description.max_position_embeddings)
    if head == "token_classifier" and settings.long_lines == "windows":
        raise TaskInputError("--long_lines=windows pools a classifier's or an encoder's "
                             "outputs; a token classifier tags the words of the first window "
                             "only (pass --long_lines=truncate).")
    return head


class Predictor:
    """The loaded model of `settings` and its per-batch prediction (see the module doc)."""

    def __init__(self, settings):
        self.settings = settings
        self.head = check_settings(settings)
        if self.head == "encoder":
            # Only what the user set: from_pretrained's defaults are `predict`'s.
            given = {name: getattr(settings, name) for name in ("pooling", "normalize")
                     if getattr(settings, name) is not None}
            self.model = SentenceEncoder.from_pretrained(
                settings.model, max_seq_length=settings.max_seq_length, **given)
        else:
            self.model = _TASKS[self.head].from_pretrained(
                settings.model, max_seq_length=settings.max_seq_length)
        self.preprocessor = self.model.preprocessor
        self.window = self.preprocessor.seq_length - 2
        self.label_names = getattr(self.model, "label_names", None) or [
            str(i) for i in range(getattr(self.model, "num_classes", 0))]

    def predict(self, lines):
        """`Prediction`s of `lines` (a sequence of `readers.Line`), in their order."""
        if not lines:
            return []
        pieces = self.preprocessor.tokenize(tf.constant([line.text for line in lines]))
        pieces = pieces.merge_dims(1, -1)
        lengths = pieces.row_lengths().numpy()
        long = lengths > self.window
        if self.head == "token_classifier":
            fields = self._tags(lines, lengths)
        else:
            fields = self._pooled(pieces, lengths)
        return [Prediction({"id": line.id, **field}, line.order, bool(is_long))
                for line, field, is_long in zip(lines, fields, long)]

    def _pooled(self, pieces, lengths):
        """Per line: its windows run length-sorted in batches, their outputs averaged."""
        spans = [(line, start, end) for line, length in enumerate(lengths)
                 for start, end in windows.window_spans(
                     int(length), self.window, self.settings.doc_stride,
                     all_windows=self.settings.long_lines == "windows")]
        spans.sort(key=lambda span: span[2] - span[1])
        outputs = []
        for first in range(0, len(spans), self.settings.batch_size):
            chunk = spans[first:first + self.settings.batch_size]
            inputs = self.preprocessor.bert_pack_inputs([windows.windowed_pieces(pieces, chunk)])
            outputs.append(self._window_outputs(self.model.predict_on_batch(inputs)))
        pooled = windows.mean_by_line(np.concatenate(outputs), [span[0] for span in spans],
                                      len(lengths))
        if self.head == "encoder":
            if self.model.normalize:
                pooled /= np.maximum(np.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12)
            return [{"embedding": row.tolist()} for row in pooled]
        return [self._classes(row) for row in pooled]

    def _window_outputs(self, outputs):
        """Per window: the embedding, or the class probabilities (what windows average)."""
        outputs = np.asarray(outputs, np.float32)
        if self.head == "encoder" or self.model.num_classes == 1:
            return outputs
        if self.model.problem_type == MULTI_LABEL:
            return 1.0 / (1.0 + np.exp(-outputs))
        exp = np.exp(outputs - outputs.max(-1, keepdims=True))
        return exp / exp.sum(-1, keepdims=True)

    def _classes(self, probabilities):
        if self.model.num_classes == 1:
            return {"score": float(probabilities[0])}
        if self.model.problem_type == MULTI_LABEL:
            label = [name for name, p in zip(self.label_names, probabilities) if p >= 0.5]
        else:
            label = self.label_names[int(np.argmax(probabilities))]
        return {"label": label, "probabilities": probabilities.tolist()}

    def _tags(self, lines, lengths):
        """Per line: a tag per word (`TokenClassifier.predict`), lines of like length batched."""
        order = np.argsort(lengths, kind="stable")
        tags = [None] * len(lines)
        size = self.settings.batch_size
        for first in range(0, len(order), size):
            chunk = order[first:first + size]
            words = [lines[i].text.split() for i in chunk]
            for i, row in zip(chunk, self.model.predict(words, batch_size=len(words))):
                tags[i] = {"tags": [self.label_names[t] if isinstance(t, int) else str(t)
                                    for t in row]}
        return tags
