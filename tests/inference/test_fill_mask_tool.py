"""tools/fill_mask.py end to end: predictions on stdout, a user's mistake as one line."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "fill_mask.py")


def _run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          cwd=ROOT)


@pytest.mark.slow
def test_prints_hugging_face_top_k_for_each_mask(masked_lm_model_dir, fill_mask_reference):
    one, two = fill_mask_reference[0], fill_mask_reference[3]  # one mask; a run of two
    result = _run_tool(f"--model_dir={masked_lm_model_dir}", "--top_k=5", one["text"],
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


@pytest.mark.slow
@pytest.mark.parametrize("case", ["no_head", "no_mask"])
def test_mistake_is_one_line_and_exit_1(case, masked_lm_model_dir, tiny_model_dir):
    model_dir, text, message = {
        "no_head": (tiny_model_dir, "the [MASK]", "has no masked-LM head"),
        "no_mask": (masked_lm_model_dir, "no mask here", "has no [MASK] token"),
    }[case]
    result = _run_tool(f"--model_dir={model_dir}", text)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("fill_mask: error:")]
    assert len(errors) == 1 and message in errors[0]
