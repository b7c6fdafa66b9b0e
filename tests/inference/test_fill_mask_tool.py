"""tools/fill_mask.py end to end: predictions on stdout, a user's mistake as one line."""

import pytest

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point

TOOL = "tools/fill_mask.py"


@pytest.mark.subprocess
def test_prints_hugging_face_top_k_for_each_mask(masked_lm_model_dir, fill_mask_reference):
    one, two = fill_mask_reference[0], fill_mask_reference[3]  # one mask; a run of two
    result = run_entry_point(TOOL, f"--model_dir={masked_lm_model_dir}", "--top_k=5", one["text"],
                             two["text"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [lines[0], lines[2]] == [one["text"], two["text"]]
    for line, tokens, probabilities in [(lines[1], one["tokens"][0], one["probabilities"][0]),
                                        (lines[3], two["tokens"][0], two["probabilities"][0]),
                                        (lines[4], two["tokens"][1], two["probabilities"][1])]:
        predictions = line.split(": ", 1)[1]
        fields = predictions.split()
        assert fields[0::2] == tokens
        assert [float(p) for p in fields[1::2]] == pytest.approx(probabilities, abs=1e-4)
    assert lines[5].startswith("  [MASK] 1-2 as one word: ")
    assert len(lines) == 6


@pytest.mark.parametrize("case, run", [
    ("no_head", call_entry_point),
    pytest.param("no_mask", run_entry_point, marks=pytest.mark.subprocess),
])
def test_mistake_is_one_line_and_exit_1(case, run, masked_lm_model_dir, tiny_model_dir):
    model_dir, text, message = {
        "no_head": (tiny_model_dir, "the [MASK]", "has no masked-LM head"),
        "no_mask": (masked_lm_model_dir, "no mask here", "has no [MASK] token"),
    }[case]
    result = run(TOOL, f"--model_dir={model_dir}", text)
    assert_user_error(result, message)
    assert result.stdout == ""
