"""GLUE's metrics: accuracy, binary F1, Matthews correlation, Pearson and Spearman correlation.

Hand-written with numpy (no scipy/sklearn at run time); each follows the textbook definition
that GLUE's evaluation used (sklearn `matthews_corrcoef`, scipy `pearsonr`/`spearmanr`).
"""

import numpy as np


def _pair(labels, predictions):
    labels = np.asarray(labels)
    predictions = np.asarray(predictions)
    if labels.shape != predictions.shape or labels.ndim != 1:
        raise ValueError(f"labels and predictions must be 1-D of equal length; received shapes "
                         f"{labels.shape} and {predictions.shape}.")
    if labels.size == 0:
        raise ValueError("No examples to score: labels and predictions are empty.")
    return labels, predictions


def accuracy(labels, predictions):
    """Fraction of `predictions` equal to `labels`."""
    labels, predictions = _pair(labels, predictions)
    return float(np.mean(labels == predictions))


def f1_score(labels, predictions, positive=1):
    """Binary F1 of class `positive` (MRPC, QQP); 0.0 when it is never predicted nor true."""
    labels, predictions = _pair(labels, predictions)
    true_positive = np.sum((predictions == positive) & (labels == positive))
    predicted = np.sum(predictions == positive)
    actual = np.sum(labels == positive)
    if true_positive == 0:
        return 0.0
    precision = true_positive / predicted
    recall = true_positive / actual
    return float(2 * precision * recall / (precision + recall))


def matthews_corrcoef(labels, predictions):
    """Matthews correlation (CoLA); the multi-class form (Gorodkin 2004), 0.0 when undefined.

    For two classes it is (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)).
    """
    labels, predictions = _pair(labels, predictions)
    classes = np.union1d(labels, predictions)
    confusion = np.zeros((classes.size, classes.size), dtype=np.float64)
    rows, columns = np.searchsorted(classes, labels), np.searchsorted(classes, predictions)
    np.add.at(confusion, (rows, columns), 1)
    true_per_class = confusion.sum(axis=1)
    predicted_per_class = confusion.sum(axis=0)
    correct = np.trace(confusion)
    total = confusion.sum()
    numerator = correct * total - np.dot(predicted_per_class, true_per_class)
    denominator = np.sqrt((total ** 2 - np.dot(predicted_per_class, predicted_per_class))
                          * (total ** 2 - np.dot(true_per_class, true_per_class)))
    return 0.0 if denominator == 0 else float(numerator / denominator)


def pearson(x, y):
    """Pearson correlation of two 1-D arrays (STS-B); 0.0 if either is constant."""
    x, y = _pair(x, y)
    x = x.astype(np.float64) - np.mean(x)
    y = y.astype(np.float64) - np.mean(y)
    denominator = np.sqrt(np.dot(x, x) * np.dot(y, y))
    return 0.0 if denominator == 0 else float(np.dot(x, y) / denominator)


def average_ranks(values):
    """1-based ranks with ties given their mean rank (scipy `rankdata(method="average")`)."""
    values = np.asarray(values)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # Start index of each run of equal values, and the run each sorted element belongs to.
    run_starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    run_ends = np.r_[run_starts[1:], values.size]
    run_of = np.repeat(np.arange(run_starts.size), run_ends - run_starts)
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = (run_starts + run_ends + 1)[run_of] / 2.0
    return ranks


def spearman(x, y):
    """Spearman rank correlation: Pearson of the average ranks (STS-B)."""
    x, y = _pair(x, y)
    return pearson(average_ranks(x), average_ranks(y))
