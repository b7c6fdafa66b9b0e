"""Hard-negative mining: which candidates become negatives, and tools/mine_hard_negatives.py."""

import json

import numpy as np
import pytest

from bert_tf.corpus_inference.hard_negatives import (
    MiningError,
    MiningOptions,
    beam_embedder,
    in_process_embedder,
    mine_hard_negatives,
)
from bert_tf.corpus_inference.predictor import PredictSettings
from tests.entry_points import assert_user_error, call_entry_point, run_entry_point

TOOL = "tools/mine_hard_negatives.py"
# Texts on a unit circle: the angle is the meaning, so the nearest texts are known.
ANGLES = {"q-a": 0, "a": 1, "q-b": 20, "b": 21, "c": 10, "d": 14, "e": 60, "f": 170}


def _embed(texts):
    radians = np.deg2rad([ANGLES[text] for text in texts])
    return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


PAIRS = [("q-a", "a"), ("q-b", "b"), ("q-c", "c"), ("q-d", "d"), ("q-e", "e"), ("q-f", "f")]
ANGLES.update({"q-c": 10, "q-d": 14, "q-e": 60, "q-f": 170})


def _negatives(rows):
    found = {}
    for anchor, _, negative in rows:
        found.setdefault(anchor, []).append(negative)
    return found


def test_the_nearest_other_positives_become_negatives():
    rows, counts = mine_hard_negatives(PAIRS, _embed, MiningOptions(num_negatives=2))
    negatives = _negatives(rows)
    assert negatives["q-a"] == ["c", "d"]  # 10 and 14 degrees away; its own "a" is not one
    assert negatives["q-b"] == ["d", "c"]
    assert counts["triplets"] == len(rows) == 12 and counts["pairs_without_negative"] == 0


def test_rank_range_margin_and_max_score_skip_near_duplicates():
    rows, _ = mine_hard_negatives(PAIRS, _embed, MiningOptions(range_min=1))
    assert _negatives(rows)["q-a"] == ["d"]  # "c", the closest, skipped
    # "c" (cos 10 deg) lies within 0.02 of the positive's cos 1 deg; "d" (cos 14) does not.
    rows, counts = mine_hard_negatives(PAIRS, _embed, MiningOptions(margin=0.02))
    assert _negatives(rows)["q-a"] == ["d"] and counts["skipped_by_margin"] >= 1
    rows, counts = mine_hard_negatives(PAIRS, _embed, MiningOptions(max_score=0.5,
                                                                    range_max=3))
    assert "q-c" not in _negatives(rows)  # every candidate within 60 degrees: none left
    assert counts["pairs_without_negative"] >= 1 and counts["skipped_by_max_score"] >= 1


def test_an_anchors_own_positives_and_text_are_never_its_negatives():
    pairs = [("q-a", "a"), ("q-a", "c"), ("c", "d"), ("q-b", "b"), ("q-e", "e")]
    negatives = _negatives(mine_hard_negatives(pairs, _embed, MiningOptions(num_negatives=3))[0])
    assert not {"a", "c"} & set(negatives["q-a"])  # both its positives
    assert "c" not in negatives["c"]  # its own text, also a positive


def test_impossible_settings_are_one_line():
    with pytest.raises(MiningError, match="--range_max=2 leaves fewer than --num_negatives=2"):
        mine_hard_negatives(PAIRS, _embed, MiningOptions(num_negatives=2, range_min=1,
                                                         range_max=2))
    with pytest.raises(MiningError, match="1 distinct positive"):
        mine_hard_negatives([("q-a", "a"), ("q-b", "a")], _embed, MiningOptions())


def _pairs_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    texts = [("what is the capital of france", "paris is the capital"),
             ("who wrote hamlet", "shakespeare wrote it"),
             ("how tall is the tower", "it is three hundred metres"),
             ("what do cats eat", "cats eat fish"), ("", "an empty anchor")]
    path.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in texts))
    return path


@pytest.mark.subprocess
def test_the_tool_writes_triplets(tiny_model_dir, tmp_path):
    output = tmp_path / "triplets.jsonl"
    result = run_entry_point(TOOL, f"--model={tiny_model_dir}",
                             f"--input_file={_pairs_file(tmp_path)}", "--anchor_column=question",
                             "--positive_column=answer", f"--output_file={output}",
                             "--num_negatives=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert ("8 triplets from 4 pairs (1 skipped for an empty side, 0 without a negative"
            in result.stdout)
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(rows) == 8 and set(rows[0]) == {"question", "answer", "negative"}
    assert all(row["negative"] != row["answer"] for row in rows)


def test_bad_input_is_one_line(tiny_model_dir, tmp_path):
    pairs, output = _pairs_file(tmp_path), tmp_path / "out.jsonl"
    common = [f"--model={tiny_model_dir}", f"--input_file={pairs}", f"--output_file={output}"]
    assert_user_error(call_entry_point(TOOL, *common), "missing column(s) ['anchor', 'positive']",
                      "the row has ['answer', 'question']")
    assert_user_error(call_entry_point(TOOL, *common, "--range_max=1", "--num_negatives=2"),
                      "--range_max=1 leaves fewer than --num_negatives=2")
    assert_user_error(call_entry_point(TOOL, *common[:2], f"--output_file={tmp_path / 'o.txt2'}"),
                      "cannot tell the format")
    output.write_text("x")
    assert_user_error(call_entry_point(TOOL, *common), "already exists")


@pytest.mark.beam
def test_beam_embeds_as_the_model_does_in_process(tiny_model_dir):
    texts = ["what is the capital of france", "paris", "who wrote hamlet", "shakespeare"]
    on_beam = beam_embedder(PredictSettings(model=tiny_model_dir))(texts)
    np.testing.assert_allclose(on_beam, in_process_embedder(tiny_model_dir)(texts), atol=1e-5)
