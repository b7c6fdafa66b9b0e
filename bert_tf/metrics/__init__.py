"""Official metrics of the paper's tasks: GLUE, SQuAD v1.1/v2.0 and CoNLL entity F1."""

from bert_tf.metrics.classification import (
    accuracy,
    f1_score,
    matthews_corrcoef,
    pearson,
    spearman,
)
from bert_tf.metrics.conlleval import evaluate_conll_lines, evaluate_tags
from bert_tf.metrics.squad import evaluate_v1, evaluate_v2

__all__ = [
    "accuracy",
    "evaluate_conll_lines",
    "evaluate_tags",
    "evaluate_v1",
    "evaluate_v2",
    "f1_score",
    "matthews_corrcoef",
    "pearson",
    "spearman",
]
