"""`saved_model_cli` (TensorFlow's own tool) reads the documented signatures and runs one."""

import os
import re
import subprocess
import sys

import pytest

from tests.export.conftest import LABELS

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

SAVED_MODEL_CLI = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
# saved_model_cli has no flag to load custom ops; registering tf-text's first is the way in.
CLI_WITH_TF_TEXT = ("import sys, tensorflow_text; "
                    "from tensorflow.python.tools.saved_model_cli import main; sys.exit(main())")
_TENSOR = re.compile(r"(inputs|outputs)\['(\w+)'\] tensor_info:\s+dtype: (\w+)\s+shape: ([^\n]+)")


def _run(command):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _signatures(show_output):
    """{signature: {("inputs"|"outputs", name): (dtype, shape)}} from `show --all`."""
    signatures = {}
    for block in show_output.split("signature_def['")[1:]:
        name = block.split("'", 1)[0]
        signatures[name] = {(kind, tensor): (dtype, shape)
                            for kind, tensor, dtype, shape in _TENSOR.findall(block)}
    return signatures


def test_show_all_lists_documented_signatures(tiny_classifier):
    signatures = _signatures(_run([SAVED_MODEL_CLI, "show", "--dir", tiny_classifier[1], "--all"]))
    classes = len(LABELS)
    outputs = {("outputs", "logits"): ("DT_FLOAT", f"(-1, {classes})"),
               ("outputs", "probabilities"): ("DT_FLOAT", f"(-1, {classes})"),
               ("outputs", "label"): ("DT_STRING", "(-1)")}
    assert signatures["serving_default"] == {("inputs", "text"): ("DT_STRING", "(-1)"), **outputs}
    tokenized = {("inputs", name): ("DT_INT32", "(-1, -1)")
                 for name in ("input_word_ids", "input_mask", "input_type_ids")}
    assert signatures["serve_tokenized"] == {**tokenized, **outputs}


def test_run_on_a_string_input(tiny_classifier):
    output = _run([sys.executable, "-c", CLI_WITH_TF_TEXT, "run", "--dir", tiny_classifier[1],
                   "--tag_set", "serve", "--signature_def", "serving_default",
                   "--input_exprs", 'text=["Arsenal won the cup final", ""]'])
    labels = re.search(r"Result for output key label:\s*\[(.*?)\]", output, re.S).group(1)
    found = re.findall(r"b'(\w+)'", labels)
    assert len(found) == 2 and set(found) <= set(LABELS)
    assert "Result for output key probabilities" in output
