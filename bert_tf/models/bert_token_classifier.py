"""BertTokenClassifier: a label per token, e.g. named entities (paper §5.3, CoNLL-2003)."""

import keras

from bert_tf.models.bert_encoder import encoder_inputs
from bert_tf.models.task_model import BertTaskModel, call_encoder, dropout_and_dense


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(BertTaskModel):
    """Dropout + one dense layer on every token's final hidden state.

    Args:
      encoder: a `BertEncoder`.
      num_classes: number of tag labels.
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.

    Returns float32 `logits` `[B, S, num_classes]`.

    Example:
    >>> tagger = BertTokenClassifier(encoder, num_classes=9)  # doctest: +SKIP
    """

    def __init__(self, encoder, num_classes, dropout_rate=None, **kwargs):
        dropout, head = dropout_and_dense(encoder, num_classes, dropout_rate, name="logits")
        inputs = encoder_inputs()
        logits = head(dropout(call_encoder(encoder, inputs)["sequence_output"]))
        super().__init__(encoder, inputs=inputs, outputs=logits, **kwargs)
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate
        self.head = head

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout_rate": self.dropout_rate}
