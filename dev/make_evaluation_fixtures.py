"""sentence-transformers' evaluator scores of fixed embeddings (dev only).

`EmbeddingSimilarityEvaluator` and `InformationRetrievalEvaluator` score seeded random
embeddings (a text's embedding is looked up, not computed), so the fixture holds only the
embeddings, the data and the scores: tests/testdata/evaluation/embeddings.npz and scores.json.
tests/evaluation/test_against_sentence_transformers.py scores the same embeddings with
bert_tf.evaluation. The data has what the evaluators must agree on: tied gold scores, a query
with several relevant passages, one whose relevant passage is not in the corpus, one with none
(left out), passages with equal embeddings (ties broken by id, "d10" before "d2"), and more
passages than the deepest cutoff.

Run from the repository root in the dev-only venv (torch, sentence-transformers; WORKSPACE.md):
    .venv-ref/bin/python dev/make_evaluation_fixtures.py
"""

import json
import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "testdata",
                   "evaluation")
DIM = 8


def fixture_data():
    """The embeddings and data, from a fixed seed."""
    rng = np.random.default_rng(63)
    pairs = 40
    first = rng.normal(size=(pairs, DIM))
    second = first + rng.uniform(0.2, 3.0, size=(pairs, 1)) * rng.normal(size=(pairs, DIM))
    cosine = np.sum(first * second, 1) / np.linalg.norm(first, axis=1) / np.linalg.norm(second,
                                                                                        axis=1)
    # Gold follows the cosine loosely, in halves from 0 to 5: ties.
    gold = np.clip(np.round((cosine + 1) * 5 + rng.normal(scale=1.0, size=pairs)) / 2, 0, 5)
    sts = {"sts_first": first, "sts_second": second, "sts_gold": gold}
    corpus = rng.normal(size=(130, DIM))
    corpus[[7, 77]] = corpus[3]  # three equal passages: d3, d7, d77
    queries = rng.normal(size=(12, DIM))
    queries[0] = corpus[3] + 0.01 * queries[0]  # its best hits are the three equal passages
    qrels = {f"q{i}": sorted({f"d{(i * 11 + j * 5) % 130}" for j in range(1 + i % 3)})
             for i in range(11)}  # q11 has none: left out
    qrels["q0"] = ["d7", "d77"]
    qrels["q4"] = ["d999"]  # not in the corpus
    return ({key: value.astype(np.float32) if value.ndim == 2 else value
             for key, value in sts.items()},
            corpus.astype(np.float32), queries.astype(np.float32), qrels)


def main():
    import sentence_transformers
    import torch
    from sentence_transformers.sentence_transformer.evaluation import (
        EmbeddingSimilarityEvaluator,
        InformationRetrievalEvaluator,
    )
    from sentence_transformers.util import cos_sim

    sts, corpus, queries, qrels = fixture_data()
    table = {}

    def lookup(self, model, sentences, **kwargs):
        return torch.tensor(np.stack([table[s] for s in sentences]))

    first = [f"first {i}" for i in range(len(sts["sts_gold"]))]
    second = [f"second {i}" for i in range(len(sts["sts_gold"]))]
    table.update(zip(first, sts["sts_first"]))
    table.update(zip(second, sts["sts_second"]))
    sts_evaluator = type("Fixed", (EmbeddingSimilarityEvaluator,), {"embed_inputs": lookup})(
        first, second, sts["sts_gold"].tolist(), similarity_fn_names=["cosine"], write_csv=False)
    model = type("Model", (), {"model_card_data": type("Card", (), {
        "set_evaluation_metrics": lambda *a, **k: None})()})()
    sts_scores = sts_evaluator(model)

    corpus_ids = [f"d{i}" for i in range(len(corpus))]
    query_ids = [f"q{i}" for i in range(len(queries))]
    table.update(zip(corpus_ids, corpus))
    table.update(zip(query_ids, queries))
    ir = type("Fixed", (InformationRetrievalEvaluator,), {"embed_inputs": lookup})(
        dict(zip(query_ids, query_ids)), dict(zip(corpus_ids, corpus_ids)),
        {qid: set(ids) for qid, ids in qrels.items()}, corpus_chunk_size=50,
        accuracy_at_k=[1, 3, 5, 10], precision_recall_at_k=[1, 3, 5, 10, 100],
        mrr_at_k=[10], ndcg_at_k=[10], map_at_k=[100], score_functions={"cosine": cos_sim},
        write_csv=False)
    ir_scores = ir.compute_all_metrics(model)["cosine"]

    os.makedirs(OUT, exist_ok=True)
    np.savez(os.path.join(OUT, "embeddings.npz"), corpus=corpus, queries=queries, **sts)
    flat = {f"{metric.split('@')[0]}@{k}": float(value)
            for metric, values in ir_scores.items() for k, value in values.items()}
    with open(os.path.join(OUT, "scores.json"), "w", encoding="utf-8") as f:
        json.dump({"sentence_transformers": sentence_transformers.__version__, "qrels": qrels,
                   "sts": {"pearson_cosine": float(sts_scores["pearson_cosine"]),
                           "spearman_cosine": float(sts_scores["spearman_cosine"])},
                   "retrieval": flat}, f, indent=2)
        f.write("\n")
    print(f"sentence-transformers {sentence_transformers.__version__}: wrote {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
