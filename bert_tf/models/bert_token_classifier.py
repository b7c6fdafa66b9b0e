"""BertTokenClassifier: a label per token, e.g. named entities (paper §5.3, CoNLL-2003)."""

import keras

from bert_tf.models.bert_classifier import BertClassifier
from bert_tf.models.task_model import call_encoder


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(BertClassifier):
    """Dropout + one dense layer on every token's final hidden state.

    The same head as `BertClassifier`, read from `sequence_output` instead of the pooled
    [CLS] output.

    Args:
      encoder: a `BertEncoder`.
      num_classes: number of tag labels.
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.

    Returns float32 `logits` `[B, S, num_classes]`.

    Example:
    >>> tagger = BertTokenClassifier(encoder, num_classes=9)  # doctest: +SKIP
    """

    @staticmethod
    def encoder_features(encoder, inputs):
        return call_encoder(encoder, inputs)["sequence_output"]
