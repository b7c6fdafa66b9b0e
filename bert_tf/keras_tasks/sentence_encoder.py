"""SentenceEncoder: raw texts -> one embedding each (pooled [CLS], or masked mean), for search."""

import keras

from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.text_task import UnlabelledTextTask, check_preprocessor
from bert_tf.models.bert_encoder import encoder_inputs
from bert_tf.models.task_model import BertTaskModel, call_encoder, check_encoder

POOLINGS = ("cls", "mean")


@keras.saving.register_keras_serializable(package="bert_tf")
class SentenceEncoder(UnlabelledTextTask, BertTaskModel):
    """Embeds raw texts: `predict` returns float32 `[B, hidden_size]`.

    "mean" averages the sequence output over real tokens (sentence-transformers' pooling, what
    all-MiniLM-L6-v2 was trained with); "cls" is the pooled [CLS] output (paper §3). With
    `normalize`, rows have unit L2 norm, so a dot product is the cosine similarity. It has no
    labels of its own, so it is not compiled: `compile(loss=...)` (the optimizer defaults to
    AdamW at 5e-5) before `fit`; `save_model_dir` and
    `export` write / serve the encoder.

    Args:
      encoder: a `BertEncoder`.
      pooling: "mean" or "cls".
      normalize: L2-normalize each embedding.
      preprocessor: a `BertPreprocessor`, or None to take token ids.

    Example:
    >>> encoder = SentenceEncoder.from_pretrained("all-MiniLM-L6-v2/")  # doctest: +SKIP
    >>> embeddings = encoder.predict(["A man plays guitar.", "Stocks fell."])  # doctest: +SKIP
    >>> float(embeddings[0] @ embeddings[1]) < 0.5                          # doctest: +SKIP
    True
    """

    model_dir_head = "encoder"

    def __init__(self, encoder, pooling="mean", normalize=True, preprocessor=None, **kwargs):
        check_encoder(encoder)
        check_preprocessor(encoder, preprocessor)
        if pooling not in POOLINGS:
            raise TaskInputError(f"pooling must be one of {POOLINGS}; received {pooling!r}.")
        inputs = encoder_inputs()
        outputs = call_encoder(encoder, inputs)
        if pooling == "cls":
            embeddings = outputs["pooled_output"]
        else:
            sequence = keras.ops.cast(outputs["sequence_output"], "float32")
            mask = keras.ops.cast(inputs["input_mask"], "float32")[..., None]
            embeddings = (keras.ops.sum(sequence * mask, axis=1)
                          / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0))
        embeddings = keras.ops.cast(embeddings, "float32")
        if normalize:
            embeddings = keras.ops.normalize(embeddings, axis=-1, order=2)
        super().__init__(encoder, inputs=inputs, outputs=embeddings, **kwargs)
        self.pooling = pooling
        self.normalize = normalize
        self.preprocessor = preprocessor
        self.text_pair = False

    @classmethod
    def from_pretrained(cls, folder, pooling="mean", normalize=True, max_seq_length=None,
                        do_lower_case=None, padding="longest", **kwargs):
        """A sentence encoder on any checkpoint folder bert_tf reads (see TextClassifier's)."""
        encoder, preprocessor, _ = cls.pretrained_parts(folder, max_seq_length, do_lower_case,
                                                        padding)
        return cls(encoder, pooling=pooling, normalize=normalize, preprocessor=preprocessor,
                   **kwargs)

    def task_config(self):
        config = {"pooling": self.pooling, "normalize": self.normalize}
        config.update(preprocessor=self.text_task_config()["preprocessor"])
        return config

    def checkpoint_items(self):
        return {"encoder": self.encoder}
