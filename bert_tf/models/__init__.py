"""Keras models: the encoder, the pretraining model and the fine-tuning task models."""

from bert_tf.models.bert_classifier import BertClassifier
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_multiple_choice import BertMultipleChoice
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.models.bert_span_labeler import BertSpanLabeler
from bert_tf.models.bert_token_classifier import BertTokenClassifier

__all__ = [
    "BertClassifier",
    "BertEncoder",
    "BertMultipleChoice",
    "BertPretrainer",
    "BertSpanLabeler",
    "BertTokenClassifier",
]
