"""GLUE metrics against values computed by hand from their definitions."""

import math

import numpy as np
import pytest

from bert_tf.metrics import classification

LABELS = [1, 1, 1, 0, 0, 0, 1, 0]
PREDICTIONS = [1, 0, 1, 0, 1, 0, 1, 0]  # TP 3, FN 1, TN 3, FP 1
X, Y = [1, 2, 3, 4, 5], [2, 4, 5, 4, 5]


def test_accuracy_and_f1():
    assert classification.accuracy(LABELS, PREDICTIONS) == 0.75
    # Precision 3/4, recall 3/4.
    assert classification.f1_score(LABELS, PREDICTIONS) == pytest.approx(0.75)
    assert classification.f1_score([0, 0], [0, 0]) == 0.0


def test_matthews_binary_by_hand():
    # (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) = (9 − 1) / sqrt(4·4·4·4)
    assert classification.matthews_corrcoef(LABELS, PREDICTIONS) == pytest.approx(0.5)
    assert classification.matthews_corrcoef([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    assert classification.matthews_corrcoef([1, 0, 1], [0, 1, 0]) == pytest.approx(-1.0)
    # Constant predictions: undefined, reported as 0 (as sklearn does).
    assert classification.matthews_corrcoef([1, 0, 1], [1, 1, 1]) == 0.0


def test_matthews_multiclass_reduces_to_binary_formula():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 50)
    predictions = rng.integers(0, 2, 50)
    tp = np.sum((labels == 1) & (predictions == 1))
    tn = np.sum((labels == 0) & (predictions == 0))
    fp = np.sum((labels == 0) & (predictions == 1))
    fn = np.sum((labels == 1) & (predictions == 0))
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert classification.matthews_corrcoef(labels, predictions) == pytest.approx(expected)


def test_pearson_by_hand():
    # dx = [-2,-1,0,1,2], dy = [-2,0,1,0,1]: sum dx·dy = 6, sum dx² = 10, sum dy² = 6.
    assert classification.pearson(X, Y) == pytest.approx(6 / math.sqrt(60))


def test_spearman_with_ties_by_hand():
    # Ranks of y with ties averaged: [1, 2.5, 4.5, 2.5, 4.5]; Pearson with ranks of x: 7/sqrt(90).
    np.testing.assert_allclose(classification.average_ranks(Y), [1, 2.5, 4.5, 2.5, 4.5])
    assert classification.spearman(X, Y) == pytest.approx(7 / math.sqrt(90))
    # Any monotone map has Spearman 1.
    assert classification.spearman([0.1, 0.5, 0.2], [1, 100, 10]) == pytest.approx(1.0)


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="equal length"):
        classification.accuracy([1, 0], [1])
    with pytest.raises(ValueError, match="empty"):
        classification.pearson([], [])
