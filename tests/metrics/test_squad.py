"""SQuAD EM/F1 on crafted predictions whose scores follow by hand from the official scripts."""

import pytest

from bert_tf.metrics import squad


def _dataset(questions):
    qas = [{"id": qid, "question": "?", "answers": [{"text": t, "answer_start": 0} for t in golds]}
           for qid, golds in questions]
    return [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]


def test_normalization():
    assert squad.normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert squad.normalize_answer("an apple, a day") == "apple day"
    assert squad.normalize_answer("Theater") == "theater"  # articles only as whole words


def test_v1_scores():
    dataset = _dataset([("q1", ["the Eiffel Tower", "Eiffel Tower"]),
                        ("q2", ["1889"]),
                        ("q3", ["Gustave Eiffel"])])
    predictions = {"q1": "Eiffel tower!", "q2": "in 1889"}  # q3 unanswered: scores 0, counted
    result = squad.evaluate_v1(dataset, predictions)
    # EM: q1 only. F1: q1 = 1, q2 = 2·(1/2·1)/(1/2+1) = 2/3.
    assert result["exact_match"] == pytest.approx(100 / 3)
    assert result["f1"] == pytest.approx(100 * (1 + 2 / 3) / 3)


V2_DATASET = _dataset([
    ("q1", ["Paris"]),
    ("q2", ["the red car"]),
    ("q3", ["blue"]),
    ("q4", []),        # no answer
    ("q5", []),        # no answer
    ("q6", ["The"]),   # has an answer that normalises to "": gold becomes ""
])
V2_PREDICTIONS = {"q1": "Paris", "q2": "red cars", "q3": "", "q4": "", "q5": "something", "q6": ""}
NA_PROBS = {"q1": 0.1, "q2": 0.2, "q3": 0.9, "q4": 0.8, "q5": 0.7, "q6": 0.3}


def test_v2_scores_and_breakdown():
    result = squad.evaluate_v2(V2_DATASET, V2_PREDICTIONS)
    # exact: q1, q4, q6. f1: q1 1, q2 1/2 (red shared of 2 and 2 tokens), q4 1, q6 1.
    assert result["total"] == 6
    assert result["exact"] == pytest.approx(50.0)
    assert result["f1"] == pytest.approx(100 * 3.5 / 6)
    assert (result["HasAns_total"], result["NoAns_total"]) == (4, 2)
    assert result["HasAns_exact"] == pytest.approx(50.0)
    assert result["HasAns_f1"] == pytest.approx(62.5)
    assert result["NoAns_exact"] == pytest.approx(50.0)
    assert "best_f1" not in result


def test_v2_best_threshold_sweep():
    result = squad.evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_probs=NA_PROBS)
    # Start at 2 (no-answer count); in na_prob order q1 +1, q2 +0 / +0.5, q6 +1, q5 -1, q4 0, q3 0.
    assert result["best_exact"] == pytest.approx(100 * 4 / 6)
    assert result["best_exact_thresh"] == 0.3
    assert result["best_f1"] == pytest.approx(75.0)
    assert result["best_f1_thresh"] == 0.3


def test_v2_na_prob_threshold_turns_predictions_into_no_answer():
    result = squad.evaluate_v2(V2_DATASET, V2_PREDICTIONS, na_probs=NA_PROBS, na_prob_thresh=0.5)
    # q3, q4, q5 above 0.5 become "no answer": q3 wrong, q4 and q5 right.
    assert result["exact"] == pytest.approx(100 * 4 / 6)
    assert result["NoAns_exact"] == pytest.approx(100.0)


def test_v2_missing_prediction_is_named():
    with pytest.raises(ValueError, match="q6"):
        squad.evaluate_v2(V2_DATASET, {k: v for k, v in V2_PREDICTIONS.items() if k != "q6"})
