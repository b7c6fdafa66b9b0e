"""Keras task models on raw text: a bert_tf head plus its `BertPreprocessor` (keras-hub's Task)."""

from bert_tf.keras_tasks.masked_lm import MaskedLM
from bert_tf.keras_tasks.sentence_encoder import SentenceEncoder
from bert_tf.keras_tasks.text_classifier import TextClassifier
from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.token_classifier import TokenClassifier

__all__ = ["MaskedLM", "SentenceEncoder", "TaskInputError", "TextClassifier", "TokenClassifier"]
