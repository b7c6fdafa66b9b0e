"""Evaluation of sentence embeddings: STS correlation and retrieval, as sentence-transformers'
evaluators score them, and a Keras callback that runs them per epoch.

`sts_scores` and `retrieval_scores` take embeddings; `STSEvaluator` and `RetrievalEvaluator`
embed with a model first; `EmbeddingEvaluation` is the `fit` callback; `nearest` is the exact
top-k search both retrieval and hard-negative mining use. `tools/evaluate_embeddings.py` runs
them on files (docs/embeddings.md).
"""

from bert_tf.evaluation.evaluators import EmbeddingEvaluation, RetrievalEvaluator, STSEvaluator
from bert_tf.evaluation.nearest import nearest
from bert_tf.evaluation.retrieval import RetrievalData, retrieval_scores
from bert_tf.evaluation.similarity import EvaluationError, sts_scores

__all__ = ["EmbeddingEvaluation", "EvaluationError", "RetrievalData", "RetrievalEvaluator",
           "STSEvaluator", "nearest", "retrieval_scores", "sts_scores"]
