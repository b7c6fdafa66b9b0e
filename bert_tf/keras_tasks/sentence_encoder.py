"""SentenceEncoder: raw texts -> one embedding each (pooled [CLS], masked mean or max), for
search."""

import keras

from bert_tf.checkpoints.building import load_pretrained
from bert_tf.keras_tasks.sentence_training import ContrastiveTraining
from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.text_task import UnlabelledTextTask, check_preprocessor
from bert_tf.models.bert_encoder import encoder_inputs
from bert_tf.models.task_model import BertTaskModel, call_encoder, check_encoder, pooled_output

POOLINGS = ("cls", "cls_token", "mean", "max")
# Added to padding before "max" pooling (sentence-transformers' value), so padding never wins.
_MAX_POOLING_PADDING = -1e9


def pooled_embeddings(encoder, inputs, pooling):
    """One vector per row of an inputs dict, by `pooling` (one of `POOLINGS`).

    The [CLS] poolings read one state, so the encoder's last block computes [CLS] alone
    (`output_positions`, as the classifier's head: docs/design.md, "The encoder and its
    heads"); "mean" and "max" read every real token's.
    """
    if pooling == "cls":
        return pooled_output(encoder, inputs)
    if pooling == "cls_token":
        cls_position = keras.ops.zeros_like(inputs["input_mask"][:, :1])  # [B, 1]: [CLS] at 0
        return call_encoder(encoder, inputs, output_positions=cls_position)["sequence_output"][:, 0]
    sequence = keras.ops.cast(call_encoder(encoder, inputs)["sequence_output"], "float32")
    mask = keras.ops.cast(inputs["input_mask"], "float32")[..., None]
    if pooling == "max":
        return keras.ops.max(sequence + (1.0 - mask) * _MAX_POOLING_PADDING, axis=1)
    return (keras.ops.sum(sequence * mask, axis=1)
            / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0))


def check_truncate_dim(truncate_dim, hidden_size):
    """Raises `TaskInputError` unless 1 <= `truncate_dim` <= the embedding width."""
    if not isinstance(truncate_dim, int) or not 1 <= truncate_dim <= hidden_size:
        raise TaskInputError(f"truncate_dim must be an integer in 1..{hidden_size} (the "
                             f"model's hidden size); received {truncate_dim!r}.")


@keras.saving.register_keras_serializable(package="bert_tf")
class SentenceEncoder(ContrastiveTraining, UnlabelledTextTask, BertTaskModel):
    """Embeds raw texts: `predict` returns float32 `[B, hidden_size]`.

    "mean" averages the sequence output over real tokens (sentence-transformers' pooling, what
    all-MiniLM-L6-v2 was trained with), "max" takes its maximum over real tokens; "cls" is the
    pooled [CLS] output (paper §3: the tanh pooler), "cls_token" the [CLS] token's state
    itself (what sentence-transformers' "cls" pooling and BGE use). With
    `normalize`, rows have unit L2 norm, so a dot product is the cosine similarity. It has no
    labels of its own, so it is not compiled: `compile(loss=...)` (the optimizer defaults to
    AdamW at 5e-5) before `fit`; with a `bert_tf.losses` ranking loss `fit` takes text pairs
    `{"anchor": [...], "positive": [...][, "negative": [...]]}` (`sentence_training`).
    `save_model_dir` and `export` write / serve the encoder.

    Args:
      encoder: a `BertEncoder`.
      pooling: "mean", "max", "cls" or "cls_token".
      normalize: L2-normalize each embedding.
      preprocessor: a `BertPreprocessor`, or None to take token ids.
      truncate_dim: keep the first `truncate_dim` numbers of each embedding (before the
        normalization), e.g. of a model trained with `bert_tf.losses.MatryoshkaLoss`; kept
        in sentence-transformers folders. sentence-transformers truncates after its
        `Normalize`: the same directions and cosines, but not unit length.

    Example:
    >>> encoder = SentenceEncoder.from_pretrained("all-MiniLM-L6-v2/")  # doctest: +SKIP
    >>> embeddings = encoder.predict(["A man plays guitar.", "Stocks fell."])  # doctest: +SKIP
    >>> float(embeddings[0] @ embeddings[1]) < 0.5                          # doctest: +SKIP
    True
    >>> encoder.compile(loss=bert_tf.losses.MultipleNegativesRankingLoss())  # doctest: +SKIP
    >>> encoder.fit({"anchor": questions, "positive": answers}, batch_size=64)  # doctest: +SKIP
    """

    model_dir_head = "encoder"

    def __init__(self, encoder, pooling="mean", normalize=True, preprocessor=None,
                 truncate_dim=None, **kwargs):
        check_encoder(encoder)
        check_preprocessor(encoder, preprocessor)
        if pooling not in POOLINGS:
            raise TaskInputError(f"pooling must be one of {POOLINGS}; received {pooling!r}.")
        inputs = encoder_inputs()
        embeddings = keras.ops.cast(pooled_embeddings(encoder, inputs, pooling), "float32")
        if truncate_dim is not None:
            check_truncate_dim(truncate_dim, encoder.config.hidden_size)
            embeddings = embeddings[:, :truncate_dim]
        if normalize:
            embeddings = keras.ops.normalize(embeddings, axis=-1, order=2)
        super().__init__(encoder, inputs=inputs, outputs=embeddings, **kwargs)
        self.pooling = pooling
        self.normalize = normalize
        self.truncate_dim = truncate_dim
        self.preprocessor = preprocessor
        self.text_pair = False

    @classmethod
    def from_pretrained(cls, folder, pooling=None, normalize=None, max_seq_length=None,
                        do_lower_case=None, padding="longest", **kwargs):
        """A sentence encoder on any checkpoint folder bert_tf reads (see TextClassifier's).

        A sentence-transformers folder (`modules.json`) gives the pooling, the normalization
        and the `max_seq_length` it was trained with, so the embeddings are the ones
        sentence-transformers computes; other folders get masked mean, normalized. Arguments
        that are not None override the folder's.

        Raises:
          CheckpointError: a sentence-transformers module bert_tf cannot run (named).
        """
        pretrained = load_pretrained(folder, do_lower_case)
        folder_pooling = pretrained.sentence_pooling
        if folder_pooling is not None:
            pooling = folder_pooling.pooling if pooling is None else pooling
            normalize = folder_pooling.normalize if normalize is None else normalize
            if max_seq_length is None:
                max_seq_length = folder_pooling.max_seq_length
            if folder_pooling.truncate_dim is not None:
                kwargs.setdefault("truncate_dim", folder_pooling.truncate_dim)
        encoder, preprocessor, _ = cls.parts_of(pretrained, max_seq_length, padding)
        return cls(encoder, pooling="mean" if pooling is None else pooling,
                   normalize=True if normalize is None else normalize,
                   preprocessor=preprocessor, **kwargs)

    def task_config(self):
        config = {"pooling": self.pooling, "normalize": self.normalize,
                  "truncate_dim": self.truncate_dim}
        config.update(preprocessor=self.text_task_config()["preprocessor"])
        return config

    def checkpoint_items(self):
        return {"encoder": self.encoder}

    def model_dir_extras(self):
        """The pooling and normalization, so `from_pretrained(model_dir)` embeds as this does."""
        return {"sentence_pooling": {"pooling": self.pooling, "normalize": self.normalize}}
