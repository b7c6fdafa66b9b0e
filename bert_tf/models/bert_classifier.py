"""BertClassifier: sentence (pair) classification or regression on the pooled output."""

import keras

from bert_tf.models.bert_encoder import encoder_inputs
from bert_tf.models.task_model import BertTaskModel, check_encoder, dropout_and_dense, pooled_output


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(BertTaskModel):
    """Dropout + one dense layer on [CLS]'s pooled output (paper §4.1, GLUE).

    Args:
      encoder: a `BertEncoder`.
      num_classes: number of labels; 1 makes a regressor (STS-B).
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.

    Returns float32 `logits` `[B, num_classes]`.

    Example:
    >>> encoder = BertEncoder.from_pretrained(model_dir)  # doctest: +SKIP
    >>> classifier = BertClassifier(encoder, num_classes=3)  # doctest: +SKIP
    >>> loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)  # doctest: +SKIP
    >>> classifier.compile(optimizer="adam", loss=loss)  # doctest: +SKIP
    """

    @staticmethod
    def encoder_features(encoder, inputs):
        """What the head reads: the pooled output (BertTokenClassifier: every token's)."""
        return pooled_output(encoder, inputs)

    def __init__(self, encoder, num_classes, dropout_rate=None, **kwargs):
        check_encoder(encoder)
        dropout, head = dropout_and_dense(encoder, num_classes, dropout_rate, name="logits")
        inputs = encoder_inputs()
        logits = head(dropout(self.encoder_features(encoder, inputs)))
        super().__init__(encoder, inputs=inputs, outputs=logits, **kwargs)
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate
        self.head = head

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout_rate": self.dropout_rate}
