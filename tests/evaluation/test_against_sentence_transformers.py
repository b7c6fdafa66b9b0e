"""bert_tf.evaluation scores what sentence-transformers' evaluators score, on fixed embeddings.

The reference is sentence-transformers 6.3's `EmbeddingSimilarityEvaluator` and
`InformationRetrievalEvaluator` on seeded random embeddings (dev/make_evaluation_fixtures.py):
tied gold scores, passages with equal embeddings (ties by id), several relevant passages, one not
in the corpus, a query with none.
"""

import json
import os

import numpy as np
import pytest

from bert_tf.evaluation import EvaluationError, RetrievalData, nearest, retrieval_scores, sts_scores
from tests.fixtures import TESTDATA

FIXTURE = os.path.join(TESTDATA, "evaluation")


@pytest.fixture(scope="module")
def reference():
    with open(os.path.join(FIXTURE, "scores.json"), encoding="utf-8") as f:
        return dict(np.load(os.path.join(FIXTURE, "embeddings.npz"))), json.load(f)


def test_sts_equals_embedding_similarity_evaluator(reference):
    embeddings, scores = reference
    ours = sts_scores(embeddings["sts_first"], embeddings["sts_second"], embeddings["sts_gold"])
    assert ours == pytest.approx(scores["sts"], abs=1e-6)


def _retrieval_data(embeddings, qrels):
    queries = {f"q{i}": f"query {i}" for i in range(len(embeddings["queries"]))}
    corpus = {f"d{i}": f"passage {i}" for i in range(len(embeddings["corpus"]))}
    return RetrievalData(queries, corpus, {qid: set(ids) for qid, ids in qrels.items()})


def test_retrieval_equals_information_retrieval_evaluator(reference):
    embeddings, scores = reference
    data = _retrieval_data(embeddings, scores["qrels"])
    assert "q11" not in data.query_ids  # no relevant passage: not scored
    ours = retrieval_scores(data, embeddings["queries"][:11], embeddings["corpus"],
                            cutoffs={"precision": (1, 3, 5, 10, 100)})
    assert ours == pytest.approx(scores["retrieval"], abs=1e-6)


def test_nearest_breaks_ties_by_order_whatever_the_blocks(reference):
    embeddings, _ = reference
    corpus = embeddings["corpus"]  # d3, d7 and d77 are equal
    _, whole = nearest(corpus[[3]], corpus, 3)
    _, blocks = nearest(corpus[[3]], corpus, 3, query_block=1, corpus_block=5)
    assert whole.tolist() == blocks.tolist() == [[3, 7, 77]]
    _, reordered = nearest(corpus[[3]], corpus, 2, tie_order=-np.arange(len(corpus)))
    assert reordered.tolist() == [[77, 7]]


def test_bad_evaluation_data_is_one_line():
    with pytest.raises(EvaluationError, match="3 gold scores for 2 sentence pairs"):
        sts_scores(np.ones((2, 4)), np.ones((2, 4)), [1, 2, 3])
    with pytest.raises(EvaluationError, match="gold scores differ"):
        sts_scores(np.eye(3), np.eye(3), [2, 2, 2])
    with pytest.raises(EvaluationError, match="None of the 1 queries has a relevant passage"):
        RetrievalData({"q": "x"}, {"d": "y"}, {"other": {"d"}})
