"""tools/export_onnx.py as a user runs it: what it writes loads as it prints; bad input refused."""

import os

import pytest

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point
from tests.fixtures import LABELS, write_tiny_model_dir
from tests.tokenization.reference_data import CASED_VOCAB

pytest.importorskip("onnxruntime_extensions", reason="the onnx extra (pip install bert_tf[onnx])")

TOOL = "tools/export_onnx.py"


@pytest.fixture(scope="module")
def classifier_dir(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("onnx_tool") / "classifier")
    write_tiny_model_dir(model_dir, "classifier", info={"max_seq_length": 16})
    return model_dir


@pytest.mark.subprocess
def test_writes_an_int8_strings_in_model_and_the_printed_lines_load_it(classifier_dir, tmp_path):
    output_dir = str(tmp_path / "onnx")
    result = run_entry_point(TOOL, f"--model={classifier_dir}", f"--output_dir={output_dir}",
                             "--text_input", "--quantize=int8")
    assert result.returncode == 0, result.stderr[-3000:]
    path = os.path.join(output_dir, "model.onnx")
    first, *snippet = result.stdout.strip().splitlines()
    assert first == (f"wrote {path} (--head=classifier, --quantize=int8; inputs: text; "
                     f"outputs: logits, probabilities; labels: {', '.join(LABELS)})")
    assert snippet[0] == "load it with:"
    scope = {}
    exec("\n".join(line.strip() for line in snippet[1:]), scope)  # the lines a user pastes
    logits, probabilities = scope["outputs"]
    assert logits.shape == probabilities.shape == (1, len(LABELS))
    assert sorted(os.listdir(output_dir)) == ["export_metadata.json", "model.onnx"]


def test_bad_input_is_one_line_and_writes_nothing(classifier_dir, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "model.onnx").write_bytes(b"another model")
    odd_vocab = tmp_path / "vocab.txt"
    with open(CASED_VOCAB, encoding="utf-8") as f:
        odd_vocab.write_text(f.read() + "line\rbreak\n", encoding="utf-8")
    odd_dir = str(tmp_path / "odd")
    write_tiny_model_dir(odd_dir, vocab_file=str(odd_vocab))
    output_dir = tmp_path / "out"
    for flags, fragments in (
            ([f"--model={classifier_dir}", "--head=span_labeler"],
             ["--head=span_labeler", "holds no span_labeler head (it holds classifier)"]),
            ([f"--model={classifier_dir}", f"--output_dir={taken}"],
             [f"{taken} already holds a model (model.onnx); nothing was overwritten"]),
            ([f"--model={odd_dir}", "--text_input"],
             ["--text_input: token", "'line\\rbreak'", "BertTokenizer op"]),
            ([f"--model={classifier_dir}", "--quantize=int4"],
             ["--quantize=int4", "none|int8"]),
            ([f"--model={classifier_dir}", "--opset=12"],
             ["--opset=12 cannot hold this graph: it needs opset 18 or newer"])):
        result = call_entry_point(TOOL, f"--output_dir={output_dir}", *flags)
        assert_user_error(result, *fragments)
        assert not output_dir.exists()
    assert (taken / "model.onnx").read_bytes() == b"another model"
