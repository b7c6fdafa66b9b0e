"""`Pretrained`: a checkpoint of any format as its config and weights, what every reader returns.

Every `Format.read` (registry.FORMATS) returns a `Pretrained`, every `Format.write` takes one,
and every consumer (the converter, `BertEncoder.from_pretrained`, the Keras task models'
`from_pretrained`) reads from one, whatever the folder was. A reader fills `weights`: numpy
arrays under our variables' paths; the models take them (`models/named_weights.py`), built
here on first use (`encoder`, `heads`, `task_head`, `build_model`).

Example:
>>> pretrained = load_pretrained("bert-sst2/")          # doctest: +SKIP
>>> pretrained.head, pretrained.label_names              # doctest: +SKIP
('classifier', ['negative', 'positive'])
>>> classifier = pretrained.build_model()                # doctest: +SKIP
>>> preprocessor = pretrained.preprocessor()             # doctest: +SKIP
"""

import dataclasses
import functools

from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.configs import BertConfig
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.models.bert_pretrainer import pretraining_heads
from bert_tf.models.named_weights import (
    HEAD_GROUPS,
    TASK_HEAD,
    build_task_head,
    encoder_part,
    group,
)

# The packed length when the folder records none: the entry points' --max_seq_length default.
DEFAULT_MAX_SEQ_LENGTH = 128
# The bert_tf model class of each task head (`model_dir.HEADS`) that takes a class count.
_LABELLED_MODELS = {"classifier": BertClassifier, "token_classifier": BertTokenClassifier}


@dataclasses.dataclass
class Pretrained:
    """A checkpoint's config and weights, whatever its format; its models built on first use.

    Attributes:
      format: the `Format.name` it was read as (None: an in-memory model).
      path: the folder (or file, or checkpoint prefix) read, or None.
      config: the encoder's `BertConfig`.
      weights: {our variable path: numpy array}: the encoder's (`embeddings/...`,
        `layer_N/...`, `pooler/...` where the checkpoint holds a pooler), the pretraining
        heads' (`masked_lm/...`, `next_sentence/...`), a task head's (`head/kernel` `[H, units]`,
        `head/bias`).
      head: the model directory `head` (`model_dir.HEADS`) it becomes: `encoder`,
        `pretrainer` (it holds pretraining heads), or a task head's (`classifier`,
        `token_classifier`, `span_labeler`, `multiple_choice`).
      vocab: the `FolderVocab`: `vocab.txt`, or tokens held in memory (`tokenizer.json`,
        a SavedModel asset), with the casing the folder records; None for a folder without
        one (`require_vocab`).
      lower_case: the casing to tokenize with (the folder's record, checked against the
        caller's; else the caller's; else guessed from the vocab).
      label_names: the task head's output names (classification, tagging), or None.
      problem_type: a sequence classifier's problem type (`single_label_classification`,
        `multi_label_classification`, `regression`), or None.
      dropout_rate: the task head's dropout where the folder records one, else None (the
        config's hidden dropout).
      max_seq_length: the sequence length the folder records, or None.
      architecture: the Hugging Face class it is (`config.json`) or would export as, or None.
      sentence_pooling: how a sentence-transformers folder pools its embeddings
        (`huggingface.sentence_transformers.SentencePooling`), else None.
      model_info: what the folder records about itself beyond the fields above (a model
        directory's `model_info.json`; `source` and the like for other formats).
    """

    format: str
    path: str
    config: BertConfig
    weights: dict
    head: str
    vocab: FolderVocab
    lower_case: bool
    label_names: list = None
    problem_type: str = None
    dropout_rate: float = None
    max_seq_length: int = None
    architecture: str = None
    sentence_pooling: object = None
    model_info: dict = dataclasses.field(default_factory=dict)

    @property
    def num_labels(self):
        """The task head's output count, or None without one."""
        bias = self.weights.get(f"{TASK_HEAD}/bias")
        return None if bias is None else len(bias)

    @property
    def has_pooler(self):
        """Whether the checkpoint held pooler weights (else the encoder's are untrained)."""
        return "pooler/kernel" in self.weights

    @property
    def pretraining_heads(self):
        """The pretraining heads held (`masked_lm`, `next_sentence`), no model built."""
        held = {group(path) for path in self.weights}
        return [key for key in HEAD_GROUPS if key in held]

    @property
    def encoder_weights(self):
        """The encoder's `weights` alone (no pretraining or task head)."""
        return encoder_part(self.weights)

    @functools.cached_property
    def encoder(self):
        """The `BertEncoder` of `config` with the encoder's `weights`."""
        return BertEncoder.from_weights(self.config, self.weights, where=self.path or "weights")

    @functools.cached_property
    def heads(self):
        """The pretraining heads held on `encoder`, keyed as `BertPretrainer.checkpoint_items()`."""
        return pretraining_heads(self.encoder, self.weights, where=self.path or "weights")

    @functools.cached_property
    def task_head(self):
        """The fine-tuned task head as a built float32 `Dense` named `head`, or None."""
        return build_task_head(self.weights, where=self.path or "weights")

    def sequence_length(self, max_seq_length=None):
        """The packed length: the caller's, else the folder's, else 128 capped at
        `max_position_embeddings`."""
        return max_seq_length or self.max_seq_length or min(
            DEFAULT_MAX_SEQ_LENGTH, self.config.max_position_embeddings)

    def require_vocab(self):
        """The `vocab`, or `FileNotFoundError` for a folder without one (its encoder reads
        without a vocab; tokenizing and writing a model directory need it)."""
        if self.vocab is None:
            raise FileNotFoundError(f"{self.path} has no vocab (vocab.txt or tokenizer.json): "
                                    "the WordPiece vocabulary is needed to tokenize text.")
        return self.vocab

    def preprocessor(self, max_seq_length=None, padding="longest"):
        """A `BertPreprocessor` with the folder's vocab and casing (`sequence_length`)."""
        return self.require_vocab().preprocessor(self.lower_case,
                                       seq_length=self.sequence_length(max_seq_length),
                                       padding=padding)

    def model_dir_info(self):
        """The `model_info.json` entries of a model directory holding this checkpoint."""
        info = dict(self.model_info, head=self.head, do_lower_case=self.lower_case)
        info.setdefault("source", self.format)
        for key, value in (("huggingface_architecture", self.architecture),
                           ("label_names", self.label_names),
                           ("problem_type", self.problem_type),
                           ("max_seq_length", self.max_seq_length)):
            if value is not None:
                info[key] = list(value) if isinstance(value, (list, tuple)) else value
        if self.sentence_pooling is not None:
            info["sentence_pooling"] = {"pooling": self.sentence_pooling.pooling,
                                        "normalize": self.sentence_pooling.normalize}
        return info

    def build_model(self, num_choices=None):
        """The bert_tf model of `head` on `encoder`, head weights copied in.

        `encoder` gives the `BertEncoder`; `pretrainer` a `BertPretrainer`; the task heads
        `BertClassifier`, `BertTokenClassifier`, `BertSpanLabeler` and `BertMultipleChoice`
        (which needs `num_choices`, the choices per example).
        """
        if self.head == "encoder":
            return self.encoder
        if self.head == "pretrainer":
            model = BertPretrainer(self.encoder,
                                   use_next_sentence="next_sentence" in self.heads)
            for key, layer in self.heads.items():
                getattr(model, key).set_weights(layer.get_weights())
            return model
        if self.head == "multiple_choice":
            if num_choices is None:
                raise ValueError("A multiple-choice checkpoint builds a BertMultipleChoice: "
                                 "pass num_choices (choices per example).")
            model = BertMultipleChoice(self.encoder, num_choices, dropout_rate=self.dropout_rate)
        elif self.head == "span_labeler":
            model = BertSpanLabeler(self.encoder)
        else:
            model = _LABELLED_MODELS[self.head](self.encoder, self.num_labels,
                                                dropout_rate=self.dropout_rate)
        model.head.set_weights(self.task_head.get_weights())
        return model
