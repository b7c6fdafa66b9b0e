"""Contrastive losses for sentence embeddings (sentence-transformers' family, in Keras)."""

from bert_tf.losses.cached_ranking import CachedMultipleNegativesRankingLoss
from bert_tf.losses.matryoshka import MatryoshkaLoss
from bert_tf.losses.ranking import LossConfigError, MultipleNegativesRankingLoss

__all__ = ["CachedMultipleNegativesRankingLoss", "LossConfigError", "MatryoshkaLoss",
           "MultipleNegativesRankingLoss"]
