"""Retrieval: how well a query's embedding finds its relevant passages in a corpus.

`retrieval_scores(...)` is sentence-transformers' `InformationRetrievalEvaluator` on
embeddings already computed, with its metrics and conventions: each query's corpus ranked by
cosine similarity (equal scores by ascending corpus id), queries without a relevant passage left
out, relevance binary; `ndcg@k` (log2 discount, ideal from the relevant count), `mrr@k`,
`recall@k` (found / relevant), `precision@k`, `accuracy@k` (any relevant in the top k) and
`map@k` (average precision over min(k, relevant)). The usual figures are `ndcg@10`, `mrr@10`
and `recall@100`.

Example:
>>> data = RetrievalData(queries={"q1": "capital of France"},
...                      corpus={"d1": "Paris is ...", "d2": "Berlin is ..."},
...                      relevant={"q1": {"d1"}})
>>> retrieval_scores(data, embed(data.query_texts),
...                  embed(data.corpus_texts))["ndcg@10"]  # doctest: +SKIP
1.0
"""

import dataclasses

import numpy as np

from bert_tf.evaluation.nearest import nearest
from bert_tf.evaluation.similarity import EvaluationError

# sentence-transformers' defaults, with recall at 100 too.
DEFAULT_CUTOFFS = {"accuracy": (1, 3, 5, 10), "precision": (1, 3, 5, 10),
                   "recall": (1, 3, 5, 10, 100), "mrr": (10,), "ndcg": (10,), "map": (100,)}


@dataclasses.dataclass
class RetrievalData:
    """Queries, a corpus and which passages answer which query (all keyed by string ids).

    Attributes:
      queries: {query id: text}.
      corpus: {passage id: text}.
      relevant: {query id: set of relevant passage ids}; queries missing here (or with an
        empty set) are not scored, as in sentence-transformers.
    """

    queries: dict
    corpus: dict
    relevant: dict

    def __post_init__(self):
        if not self.corpus:
            raise EvaluationError("The retrieval corpus is empty.")
        if not self.query_ids:
            raise EvaluationError(f"None of the {len(self.queries)} queries has a relevant "
                                  "passage in the relevance judgments (qrels).")

    @property
    def query_ids(self):
        """The ids of the queries scored: those with a relevant passage, in `queries` order."""
        return [qid for qid in self.queries if self.relevant.get(qid)]

    @property
    def query_texts(self):
        return [self.queries[qid] for qid in self.query_ids]

    @property
    def corpus_ids(self):
        return list(self.corpus)

    @property
    def corpus_texts(self):
        return list(self.corpus.values())


def _dcg(relevances):
    return float(np.sum(np.asarray(relevances) / np.log2(np.arange(len(relevances)) + 2)))


def query_scores(hits, relevant, cutoffs):
    """One query's metrics: `hits` its ranked passage ids, `relevant` the set it needs."""
    scores = {}
    found = np.array([hit in relevant for hit in hits], dtype=np.float64)
    for k in cutoffs["accuracy"]:
        scores[f"accuracy@{k}"] = float(found[:k].any())
    for k in cutoffs["precision"]:
        scores[f"precision@{k}"] = found[:k].sum() / k
    for k in cutoffs["recall"]:
        scores[f"recall@{k}"] = found[:k].sum() / len(relevant)
    for k in cutoffs["mrr"]:
        first = np.flatnonzero(found[:k])
        scores[f"mrr@{k}"] = 1.0 / (first[0] + 1) if len(first) else 0.0
    for k in cutoffs["ndcg"]:
        scores[f"ndcg@{k}"] = _dcg(found[:k]) / _dcg(np.ones(min(len(relevant), k)))
    for k in cutoffs["map"]:
        precisions = np.cumsum(found[:k]) / np.arange(1, len(found[:k]) + 1)
        scores[f"map@{k}"] = float(np.sum(precisions * found[:k]) / min(k, len(relevant)))
    return scores


def retrieval_scores(data, query_embeddings, corpus_embeddings, cutoffs=None):
    """The mean of each metric over `data`'s scored queries.

    Args:
      data: a `RetrievalData`.
      query_embeddings: `[len(data.query_ids), H]`, in `query_ids` order.
      corpus_embeddings: `[len(data.corpus), H]`, in `corpus_ids` order.
      cutoffs: {metric: ks}; default `DEFAULT_CUTOFFS`.

    Returns:
      {"ndcg@10": ..., "mrr@10": ..., "recall@100": ..., ...}.
    """
    cutoffs = dict(DEFAULT_CUTOFFS, **(cutoffs or {}))
    query_ids, corpus_ids = data.query_ids, data.corpus_ids
    if len(query_embeddings) != len(query_ids) or len(corpus_embeddings) != len(corpus_ids):
        raise EvaluationError(f"{len(query_embeddings)} query and {len(corpus_embeddings)} "
                              f"passage embeddings for {len(query_ids)} queries and "
                              f"{len(corpus_ids)} passages.")
    depth = max(k for ks in cutoffs.values() for k in ks)
    # Equal scores go to the smaller id, as sentence-transformers orders them.
    id_rank = np.empty(len(corpus_ids), dtype=np.int64)
    id_rank[sorted(range(len(corpus_ids)), key=corpus_ids.__getitem__)] = np.arange(len(corpus_ids))
    _, hits = nearest(query_embeddings, corpus_embeddings, depth, tie_order=id_rank)
    totals = {}
    for qid, row in zip(query_ids, hits):
        for name, value in query_scores([corpus_ids[i] for i in row], data.relevant[qid],
                                        cutoffs).items():
            totals[name] = totals.get(name, 0.0) + value
    return {name: total / len(query_ids) for name, total in totals.items()}
