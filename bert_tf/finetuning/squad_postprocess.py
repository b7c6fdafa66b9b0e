"""Start/end logits of SQuAD windows → answer texts, n-best lists and no-answer odds.

Follows google-research `run_squad.py` `write_predictions`: the `n_best_size` best starts and
ends of each window's context tokens (google-research ranks every position, so [CLS], question
and padding tokens could take places in the n best; ranking only the context makes the answer
independent of the padding), spans inside the context, the token's max-context window,
`end >= start`, at most `max_answer_length` tokens; for v2.0 the null span ([CLS]) with the
lowest score over windows competes, and the answer is "" when
`null score − best non-null score > null_score_diff_threshold`. Text comes from the context
bytes the tokenizer's offsets point at (google-research re-aligns normalised text instead).
"""

import collections
import json
import os

import numpy as np
import tensorflow as tf


def _softmax(scores):
    scores = np.asarray(scores, np.float64)
    exp = np.exp(scores - np.max(scores))
    return exp / exp.sum()


def _top(logits, n):
    return np.argsort(-logits, kind="stable")[:n]


def postprocess_predictions(examples, features, start_logits, end_logits, n_best_size=20,
                            max_answer_length=30, version_2_with_negative=False,
                            null_score_diff_threshold=0.0):
    """Answers of `examples` from window logits.

    Args:
      examples: the `SquadExample`s the features were made from.
      features: their `SquadFeatures`.
      start_logits, end_logits: float `[N, W]`, one row per window (W ≤ S: padding cut).

    Returns:
      (predictions: id → text, nbest: id → list of {text, probability, start_logit,
      end_logit}, null_odds: id → null score minus best non-null score; empty for v1.1).
    """
    start_logits = np.asarray(start_logits)
    end_logits = np.asarray(end_logits)
    windows_of = collections.defaultdict(list)
    for window, example_index in enumerate(features.example_index):
        windows_of[int(example_index)].append(window)
    predictions, nbest, null_odds = {}, {}, {}
    for example_index, example in enumerate(examples):
        candidates, null = [], None
        for window in windows_of[example_index]:
            starts, ends = start_logits[window], end_logits[window]
            if version_2_with_negative and (null is None or starts[0] + ends[0] < null[0]):
                null = (starts[0] + ends[0], starts[0], ends[0])
            candidates += _window_candidates(example.context.encode("utf-8"), features, window,
                                             starts, ends, n_best_size, max_answer_length)
        entries = _nbest_entries(candidates, null, n_best_size, version_2_with_negative)
        nbest[example.qas_id] = entries
        if not version_2_with_negative:
            predictions[example.qas_id] = entries[0]["text"]
            continue
        best_non_null = next(e for e in entries if e["text"])
        diff = float(null[0] - best_non_null["start_logit"] - best_non_null["end_logit"])
        null_odds[example.qas_id] = diff
        predictions[example.qas_id] = "" if diff > null_score_diff_threshold \
            else best_non_null["text"]
    return predictions, nbest, null_odds


def _window_candidates(context, features, window, starts, ends, n_best_size, max_answer_length):
    """(score, text, start logit, end logit) of the valid spans among a window's best ends."""
    # Rows may be narrower than S (batches packed to their longest); context lies within them.
    spans = features.token_byte_spans[window][:len(starts)]
    max_context = features.token_is_max_context[window]
    # Only context tokens are ranked: [CLS], the question, [SEP] and padding never answer,
    # and how much padding a window has (its batch's width) must not change its n best.
    in_context = spans[:, 0] >= 0
    candidates = []
    for s in _top(np.where(in_context, starts, -np.inf), n_best_size):
        for e in _top(np.where(in_context, ends, -np.inf), n_best_size):
            if spans[s, 0] < 0 or spans[e, 0] < 0 or not max_context[s]:
                continue
            if e < s or e - s + 1 > max_answer_length:
                continue
            text = context[spans[s, 0]:spans[e, 1]].decode("utf-8", errors="ignore")
            candidates.append((starts[s] + ends[e], text, starts[s], ends[e]))
    return candidates


def _nbest_entries(candidates, null, n_best_size, version_2_with_negative):
    """The n-best list of distinct texts with probabilities (google-research's rules)."""
    if null is not None:
        candidates = candidates + [(null[0], "", null[1], null[2])]
    candidates = sorted(candidates, key=lambda c: c[0], reverse=True)
    entries, seen = [], set()
    for _, text, start, end in candidates:
        if len(entries) >= n_best_size:
            break
        if text in seen:
            continue
        seen.add(text)
        entries.append({"text": text, "start_logit": float(start), "end_logit": float(end)})
    if version_2_with_negative and "" not in seen:
        entries.append({"text": "", "start_logit": float(null[1]), "end_logit": float(null[2])})
    # google-research's placeholder when nothing (or only the null answer) survives.
    if not entries or (version_2_with_negative and len(entries) == 1):
        entries.insert(0, {"text": "empty", "start_logit": 0.0, "end_logit": 0.0})
    probabilities = _softmax([e["start_logit"] + e["end_logit"] for e in entries])
    for entry, probability in zip(entries, probabilities):
        entry["probability"] = float(probability)
    return entries


def write_predictions(output_dir, predictions, nbest, null_odds):
    """Writes predictions.json, nbest_predictions.json and null_odds.json; returns their paths."""
    tf.io.gfile.makedirs(output_dir)
    paths = []
    for name, value in (("predictions.json", predictions), ("nbest_predictions.json", nbest),
                        ("null_odds.json", null_odds)):
        path = os.path.join(output_dir, name)
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(json.dumps(value, indent=4, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths
