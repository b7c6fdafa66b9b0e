"""SQuAD exact match and F1, counted as the official v1.1 and v2.0 evaluation scripts count them.

Scores are percentages, as the scripts print them. v1.1: a question without a prediction scores
0 and stays in the total. v2.0: gold answers that normalise to "" are dropped (no gold left means
the gold is ""), an empty prediction means "no answer", a `na_probs` above `na_prob_thresh` turns a
prediction into "no answer", and the result has `HasAns_*` / `NoAns_*` breakdowns and, given
`na_probs`, the best threshold sweep (`best_exact`, `best_f1` and their thresholds).
"""

import collections
import re
import string

from absl import logging

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text):
    """Lower-cases, drops punctuation and the articles a/an/the, and collapses whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(gold, prediction):
    return int(normalize_answer(gold) == normalize_answer(prediction))


def f1_v1(gold, prediction):
    """v1.1 token F1: 0 when nothing is shared (also when either side is empty)."""
    return _token_f1(normalize_answer(gold).split(), normalize_answer(prediction).split())


def f1_v2(gold, prediction):
    """v2.0 token F1: if either side has no tokens, 1 when both are empty, else 0."""
    gold_tokens = normalize_answer(gold).split()
    predicted_tokens = normalize_answer(prediction).split()
    if not gold_tokens or not predicted_tokens:
        return int(gold_tokens == predicted_tokens)
    return _token_f1(gold_tokens, predicted_tokens)


def _token_f1(gold_tokens, predicted_tokens):
    common = collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(predicted_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _questions(dataset):
    """(id, gold answer texts) of every question of a SQuAD `data` list."""
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield qa["id"], [answer["text"] for answer in qa.get("answers", [])]


def evaluate_v1(dataset, predictions):
    """The official v1.1 script: `{"exact_match": ..., "f1": ...}` in percent.

    Args:
      dataset: the `data` list of a SQuAD JSON file.
      predictions: dict question id → predicted answer text.
    """
    exact = f1 = total = 0
    for qid, golds in _questions(dataset):
        total += 1
        if qid not in predictions:
            logging.warning("Unanswered question %s will receive score 0.", qid)
            continue
        prediction = predictions[qid]
        exact += max(exact_match(gold, prediction) for gold in golds)
        f1 += max(f1_v1(gold, prediction) for gold in golds)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def _mean(scores, qids):
    return 100.0 * sum(scores[q] for q in qids) / len(qids)


def evaluate_v2(dataset, predictions, na_probs=None, na_prob_thresh=1.0):
    """The official v2.0 script's output dict (`exact`, `f1`, `total`, `HasAns_*`, `NoAns_*`...).

    Args:
      dataset: the `data` list of a SQuAD 2.0 JSON file.
      predictions: dict question id → answer text ("" for no answer), one per question.
      na_probs: optional dict question id → no-answer score (`null_odds.json`); adds the
        best-threshold fields.
      na_prob_thresh: predict "no answer" where `na_probs` exceeds this.

    Raises:
      ValueError: a question has no prediction (the official script fails on it too).
    """
    has_answer, exact_raw, f1_raw = {}, {}, {}
    for qid, golds in _questions(dataset):
        has_answer[qid] = bool(golds)
        if qid not in predictions:
            raise ValueError(f"SQuAD v2.0 evaluation: no prediction for question {qid!r}.")
        golds = [gold for gold in golds if normalize_answer(gold)] or [""]
        exact_raw[qid] = max(exact_match(gold, predictions[qid]) for gold in golds)
        f1_raw[qid] = max(f1_v2(gold, predictions[qid]) for gold in golds)
    probs = na_probs if na_probs is not None else {qid: 0.0 for qid in predictions}
    exact = _apply_threshold(exact_raw, probs, has_answer, na_prob_thresh)
    f1 = _apply_threshold(f1_raw, probs, has_answer, na_prob_thresh)
    qids = list(exact)
    result = {"exact": _mean(exact, qids), "f1": _mean(f1, qids), "total": len(qids)}
    for prefix, subset in (("HasAns", [q for q in qids if has_answer[q]]),
                           ("NoAns", [q for q in qids if not has_answer[q]])):
        if subset:
            result.update({f"{prefix}_exact": _mean(exact, subset),
                           f"{prefix}_f1": _mean(f1, subset), f"{prefix}_total": len(subset)})
    if na_probs is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            best, threshold = _best_threshold(predictions, raw, na_probs, has_answer)
            result[f"best_{name}"] = best
            result[f"best_{name}_thresh"] = threshold
    return result


def _apply_threshold(scores, na_probs, has_answer, threshold):
    return {qid: float(not has_answer[qid]) if na_probs[qid] > threshold else score
            for qid, score in scores.items()}


def _best_threshold(predictions, scores, na_probs, has_answer):
    """Sweeps thresholds in order of `na_probs` as the official `find_best_thresh` does."""
    score = best = sum(1 for qid in has_answer if not has_answer[qid])
    best_threshold = 0.0
    for qid in sorted(na_probs, key=lambda q: na_probs[q]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            score += scores[qid]
        elif predictions[qid]:
            score -= 1
        if score > best:
            best = score
            best_threshold = na_probs[qid]
    return 100.0 * best / len(scores), best_threshold
