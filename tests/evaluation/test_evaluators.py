"""Evaluators embed with the model and score; the callback runs them after every epoch of fit."""

import json

import numpy as np
import pytest

from bert_tf.evaluation import (
    EmbeddingEvaluation,
    RetrievalData,
    RetrievalEvaluator,
    STSEvaluator,
    retrieval_scores,
    sts_scores,
)
from bert_tf.evaluation.data_files import read_retrieval_files, read_sts_file
from bert_tf.finetuning.table_reader import DataError
from bert_tf.keras_tasks import SentenceEncoder

FIRST = ["A man plays a guitar.", "A dog runs.", "Stocks fell.", "It is raining.",
         "The cat sleeps."]
SECOND = ["Someone plays music.", "A puppy is running.", "Markets dropped.", "The sun shines.",
          "A kitten naps."]
GOLD = [4.0, 4.5, 4.2, 0.5, 4.0]


@pytest.fixture(scope="module")
def encoder(tiny_model_dir):
    return SentenceEncoder.from_pretrained(tiny_model_dir, max_seq_length=16)


def _retrieval():
    return RetrievalData({"q1": FIRST[0], "q2": FIRST[1], "q3": FIRST[2]},
                         {f"d{i}": text for i, text in enumerate(SECOND)},
                         {"q1": {"d0"}, "q2": {"d1", "d4"}, "q3": {"d2"}})


def test_evaluators_score_the_models_embeddings(encoder):
    sts = STSEvaluator(FIRST, SECOND, GOLD, name="dev", batch_size=2)
    expected = sts_scores(encoder.predict(FIRST, verbose=0), encoder.predict(SECOND, verbose=0),
                          GOLD)
    assert sts(encoder) == pytest.approx({f"dev_{k}": v for k, v in expected.items()})
    data = _retrieval()
    expected = retrieval_scores(data, encoder.predict(data.query_texts, verbose=0),
                                encoder.predict(data.corpus_texts, verbose=0))
    scores = RetrievalEvaluator(data)(encoder)
    assert scores == pytest.approx({f"retrieval_{k}": v for k, v in expected.items()})
    assert scores["retrieval_recall@100"] == 1.0  # five passages: all found by 100


def test_the_callback_scores_every_epoch_into_the_logs(tiny_model_dir):
    model = SentenceEncoder.from_pretrained(tiny_model_dir, max_seq_length=16)
    model.compile(loss="mse")
    lines = []
    callback = EmbeddingEvaluation([STSEvaluator(FIRST, SECOND, GOLD),
                                    RetrievalEvaluator(_retrieval())], log=lines.append)
    targets = np.ones((len(FIRST), model.encoder.config.hidden_size), np.float32)
    history = model.fit(FIRST, targets, epochs=2, batch_size=5, verbose=0, callbacks=[callback])
    assert len(history.history["sts_spearman_cosine"]) == 2
    assert len(history.history["retrieval_ndcg@10"]) == 2
    assert history.history["sts_spearman_cosine"][-1] == pytest.approx(
        STSEvaluator(FIRST, SECOND, GOLD)(model)["sts_spearman_cosine"])
    assert [line.split(":")[0] for line in lines] == ["epoch 1"] * 2 + ["epoch 2"] * 2
    assert callback.scores_by_epoch[0]["sts_spearman_cosine"] == pytest.approx(
        history.history["sts_spearman_cosine"][0])
    assert lines[1].startswith("epoch 1: retrieval: ndcg@10 ")


def _write(path, rows, jsonl=True):
    with open(path, "w", encoding="utf-8") as f:
        if jsonl:
            f.writelines(json.dumps(row) + "\n" for row in rows)
        else:
            f.write("\n".join("\t".join(map(str, row)) for row in rows) + "\n")
    return str(path)


def test_files_are_read_as_beir_lays_them_out(tmp_path):
    sts = _write(tmp_path / "sts.jsonl", [{"sentence1": a, "sentence2": b, "score": s}
                                         for a, b, s in zip(FIRST, SECOND, GOLD)])
    assert read_sts_file(sts) == (FIRST, SECOND, GOLD)
    queries = _write(tmp_path / "q.jsonl", [{"_id": "q1", "text": "who"}, {"_id": 2, "text": "x"}])
    corpus = _write(tmp_path / "c.jsonl", [{"_id": "d1", "title": "Paris", "text": "A city."},
                                           {"_id": "d2", "text": "Berlin."}])
    qrels = _write(tmp_path / "qrels.tsv", [("query-id", "corpus-id", "score"), ("q1", "d1", 1),
                                            ("2", "d2", 0)], jsonl=False)
    data = read_retrieval_files(queries, corpus, qrels)
    assert data.corpus == {"d1": "Paris A city.", "d2": "Berlin."}
    assert data.relevant == {"q1": {"d1"}} and data.query_ids == ["q1"]  # score 0: not relevant


def test_bad_files_are_one_line(tmp_path):
    sts = _write(tmp_path / "sts.jsonl", [{"text_a": "x", "text_b": "y", "score": 1}])
    with pytest.raises(DataError, match=r"sts.jsonl:1: missing column\(s\) \['sentence1', "
                                        r"'sentence2'\]; the row has \['score', 'text_a'"):
        read_sts_file(sts)
    sts = _write(tmp_path / "bad.jsonl", [{"sentence1": "x", "sentence2": "y", "score": "high"}])
    with pytest.raises(DataError, match="bad.jsonl:1: `score` is 'high', not a number"):
        read_sts_file(sts)
    queries = _write(tmp_path / "q.jsonl", [{"_id": "q1", "text": "who"}])
    corpus = _write(tmp_path / "c.jsonl", [{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}])
    qrels = _write(tmp_path / "qrels.tsv", [("query-id", "corpus-id", "score"), ("q9", "d1", 1)],
                   jsonl=False)
    with pytest.raises(DataError, match="c.jsonl:2: the id 'd1' appears twice"):
        read_retrieval_files(queries, corpus, qrels)
    corpus = _write(tmp_path / "c.jsonl", [{"_id": "d1", "text": "a"}])
    with pytest.raises(DataError, match="qrels.tsv:2: query 'q9' is not in"):
        read_retrieval_files(queries, corpus, qrels)
