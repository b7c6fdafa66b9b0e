"""Exact nearest neighbours of embeddings: the top-k corpus rows of each query by cosine.

`nearest(queries, corpus, k)` scores queries against the corpus a block at a time (a block of
`query_block` queries against `corpus_block` corpus rows: one matrix product of at most
`query_block * corpus_block` floats), keeps each query's best `k` and merges them across
blocks, so memory stays flat however large the corpus (it may be a memory-mapped `.npy`). Hits
are ordered by score, equal scores by corpus position (or by `tie_order`, e.g. the ids'
sorted order, as sentence-transformers' `InformationRetrievalEvaluator` breaks them), so the
result does not depend on the block sizes. Exact search is what evaluation needs; at a few
million rows an approximate index (faiss, ScaNN) is faster.

Example:
>>> scores, indices = nearest(query_embeddings, corpus_embeddings, k=10)  # doctest: +SKIP
>>> indices.shape                                                          # doctest: +SKIP
(1000, 10)
"""

import numpy as np

from bert_tf.evaluation.similarity import unit_rows

# Block sizes: 256 x 16,384 float32 scores are 16 MiB.
QUERY_BLOCK = 256
CORPUS_BLOCK = 16384


def _top(scores, keys, k):
    """`[Q, k]` column positions of each row's `k` best `scores` `[Q, M]`: highest first,
    equal scores by ascending `keys` (`[Q, M]` or `[M]`)."""
    keys = np.broadcast_to(keys, scores.shape)
    k = min(k, scores.shape[1])
    candidates = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    tied = []
    if k < scores.shape[1]:
        candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(scores, candidates, axis=1).min(axis=1)
        # Rows whose k-th score is shared with columns left out: choose among all of them.
        tied = np.flatnonzero(np.sum(scores >= kth[:, None], axis=1) > k)
    order = np.lexsort((np.take_along_axis(keys, candidates, axis=1),
                        -np.take_along_axis(scores, candidates, axis=1)), axis=1)
    best = np.take_along_axis(candidates, order, axis=1)
    for row in tied:
        pool = np.flatnonzero(scores[row] >= kth[row])
        best[row] = pool[np.lexsort((keys[row, pool], -scores[row, pool]))[:k]]
    return best


def nearest(queries, corpus, k, *, normalize=True, tie_order=None, query_block=QUERY_BLOCK,
            corpus_block=CORPUS_BLOCK):
    """The `k` corpus rows most similar to each query, best first.

    Args:
      queries: `[Q, H]` embeddings.
      corpus: `[N, H]` embeddings (an array or a memory-mapped `.npy`).
      k: hits per query (at most `N`).
      normalize: score by cosine (rows made unit length); False: by dot product.
      tie_order: `[N]` integers that order equal scores (default: corpus position).
      query_block, corpus_block: rows scored at once (memory: their product in float32).

    Returns:
      `(scores, indices)`, both `[Q, min(k, N)]`: float32 similarities and corpus rows.
    """
    prepare = unit_rows if normalize else (lambda rows: np.asarray(rows, dtype=np.float32))
    queries = prepare(queries)
    size = len(corpus)
    k = min(k, size)
    tie_order = np.arange(size) if tie_order is None else np.asarray(tie_order)
    all_scores = np.empty((len(queries), k), dtype=np.float32)
    all_indices = np.empty((len(queries), k), dtype=np.int64)
    for q_start in range(0, len(queries), query_block):
        block = queries[q_start:q_start + query_block]
        kept_scores = np.empty((len(block), 0), dtype=np.float32)
        kept_indices = np.empty((len(block), 0), dtype=np.int64)
        for c_start in range(0, size, corpus_block):
            scores = block @ prepare(corpus[c_start:c_start + corpus_block]).T
            local = _top(scores, tie_order[c_start:c_start + corpus_block], k)
            # This block's best merged with the best so far.
            kept_scores = np.concatenate(
                [kept_scores, np.take_along_axis(scores, local, axis=1)], axis=1)
            kept_indices = np.concatenate([kept_indices, local + c_start], axis=1)
            best = _top(kept_scores, tie_order[kept_indices], k)
            kept_scores = np.take_along_axis(kept_scores, best, axis=1)
            kept_indices = np.take_along_axis(kept_indices, best, axis=1)
        all_scores[q_start:q_start + len(block)] = kept_scores
        all_indices[q_start:q_start + len(block)] = kept_indices
    return all_scores, all_indices
