"""`Pretrained`: a checkpoint of any format as its config and weights, what every reader returns.

Every `Format.read` (registry.FORMATS) returns a `Pretrained`: numpy arrays under our
variables' paths in `weights`, no model, so the readers sit below `models/` and
`BertEncoder.from_pretrained` reads through them (`registry.read_pretrained`). The models
take the arrays (`models/named_weights.py`); `building.PretrainedModels`, above `models/`,
builds them on first use (what `load_pretrained` returns and every `Format.write` takes).

Example:
>>> pretrained = read_pretrained("bert-sst2/")          # doctest: +SKIP
>>> pretrained.head, pretrained.label_names              # doctest: +SKIP
('classifier', ['negative', 'positive'])
>>> preprocessor = pretrained.preprocessor()             # doctest: +SKIP
"""

import dataclasses

from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.checkpoints.weight_map import HEAD_GROUPS, TASK_HEAD
from bert_tf.configs import BertConfig

# The packed length when the folder records none: the entry points' --max_seq_length default.
DEFAULT_MAX_SEQ_LENGTH = 128


@dataclasses.dataclass
class Pretrained:
    """A checkpoint's config and weights, whatever its format (no model built).

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
        held = {path.split("/")[0] for path in self.weights}
        return [key for key in HEAD_GROUPS if key in held]

    @property
    def encoder_weights(self):
        """The encoder's `weights` alone (no pretraining or task head)."""
        heads = HEAD_GROUPS + (TASK_HEAD,)
        return {path: value for path, value in self.weights.items()
                if path.split("/")[0] not in heads}

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
