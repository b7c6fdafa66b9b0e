"""Semantic textual similarity: how well embeddings' cosine similarities rank sentence pairs.

`sts_scores(embeddings1, embeddings2, gold)` is sentence-transformers'
`EmbeddingSimilarityEvaluator` on embeddings already computed: the Pearson and Spearman
correlations between each pair's cosine similarity and its gold score (Spearman ranks ties by
their mean rank, as `scipy.stats.spearmanr`). STS-B's figure is `spearman_cosine`.

Example:
>>> sts_scores(model.predict(first), model.predict(second), gold)  # doctest: +SKIP
{'pearson_cosine': 0.871, 'spearman_cosine': 0.869}
"""

import numpy as np

from bert_tf.errors import UserError


class EvaluationError(UserError, ValueError):
    """Evaluation data that cannot be scored (sizes that differ, too few examples)."""


def unit_rows(embeddings):
    """`embeddings` `[N, H]` as float32 rows of unit L2 norm (a zero row stays zero)."""
    embeddings = np.asarray(embeddings, dtype=np.float32)
    if embeddings.ndim != 2:
        raise EvaluationError(f"Embeddings must be a matrix [N, H]; received shape "
                              f"{embeddings.shape}.")
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    return embeddings / np.maximum(norms, 1e-12)


def paired_cosine(embeddings1, embeddings2):
    """`[N]`: the cosine similarity of each row of `embeddings1` with the same row of
    `embeddings2`."""
    first, second = unit_rows(embeddings1), unit_rows(embeddings2)
    if first.shape != second.shape:
        raise EvaluationError(f"The two sides hold {first.shape} and {second.shape} embeddings; "
                              "each pair needs one of each.")
    return np.sum(first * second, axis=1)


def mean_ranks(values):
    """1-based ranks of `values`, ties given the mean of the ranks they span."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    # Runs of equal values: each gets the mean of its first and last rank.
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    run_ranks = (starts + ends + 1) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(run_ranks, ends - starts)
    return ranks


def pearson(x, y):
    """The Pearson correlation of two equally long sequences."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    y = np.asarray(y, dtype=np.float64) - np.mean(y)
    return float(np.sum(x * y) / np.sqrt(np.sum(x * x) * np.sum(y * y)))


def spearman(x, y):
    """The Spearman rank correlation: Pearson of the mean ranks."""
    return pearson(mean_ranks(x), mean_ranks(y))


def sts_scores(embeddings1, embeddings2, gold):
    """`{"pearson_cosine", "spearman_cosine"}` of pairs' cosine similarities against `gold`.

    Args:
      embeddings1, embeddings2: `[N, H]`, the pairs' first and second sentences.
      gold: `[N]` gold similarity scores (STS-B: 0 to 5).

    Raises:
      EvaluationError: sizes that differ, fewer than two pairs, or gold scores all equal.
    """
    cosine = paired_cosine(embeddings1, embeddings2)
    gold = np.asarray(gold, dtype=np.float64)
    if gold.shape != cosine.shape:
        raise EvaluationError(f"{len(gold)} gold scores for {len(cosine)} sentence pairs.")
    if len(gold) < 2 or np.all(gold == gold[0]):
        raise EvaluationError("A correlation needs at least two pairs whose gold scores "
                              f"differ; received {len(gold)} pair(s).")
    return {"pearson_cosine": pearson(gold, cosine), "spearman_cosine": spearman(gold, cosine)}
