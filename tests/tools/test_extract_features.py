"""tools/extract_features.py as a user runs it: a good run, and every bad input refused."""

import json
import os

import pytest

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot

TOOL = "tools/extract_features.py"


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"Hello, world!\n\nWho was Jim Henson? ||| He was a puppeteer\n")
    return str(path)


@pytest.mark.subprocess
def test_linex_index_is_the_input_line_and_output_is_json(tiny_model_dir, input_file, tmp_path):
    output = tmp_path / "features.jsonl"
    result = run_entry_point(TOOL, f"--model_dir={tiny_model_dir}",
                      f"--input_file={input_file}", f"--output_file={output}", "--layers=-1,0",
                      "--max_seq_length=16")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in output.read_text().split("\n") if line]
    # Line 1 is blank: google-research numbers examples by input line (0-based).
    assert [line["linex_index"] for line in lines if line["features"][1:-1]] == [0, 2]
    assert [layer["index"] for layer in lines[0]["features"][0]["layers"]] == [-1, 0]
    assert [name for name in os.listdir(tmp_path) if name.startswith(".")] == []


def _run(model_dir, input_file, output, *flags):
    # The tiny model has 2 layers: google-research's default -1,-2,-3,-4 does not fit it.
    return call_entry_point(TOOL, f"--model_dir={model_dir}", f"--input_file={input_file}",
                            f"--output_file={output}", "--layers=-1", "--max_seq_length=16",
                            *flags)


def test_existing_output_is_refused_and_kept(tiny_model_dir, input_file, tmp_path):
    output = tmp_path / "features.jsonl"
    output.write_bytes(b"precious\n")
    result = _run(tiny_model_dir, input_file, output)
    assert_user_error(result, f"--output_file={output}", "already exists")
    assert output.read_bytes() == b"precious\n"


@pytest.mark.parametrize("flags, fragments", [
    (["--layers=5"], ["--layers=5", "layers -2..1"]),
    (["--layers=-1,-2,-3,-4"], ["--layers=-1,-2,-3,-4", "this 2-layer model"]),
    (["--layers=a"], ["--layers=a", "integers"]),
    (["--do_lower_case=false"], ["--do_lower_case=False contradicts", "model_info.json"]),
    (["--max_seq_length=1000"], ["--max_seq_length=1000", "max_position_embeddings (64)"]),
    (["--batch_size=0"], ["--batch_size"]),
])
def test_bad_flags(tiny_model_dir, input_file, tmp_path, flags, fragments):
    before = snapshot(tiny_model_dir)
    assert_user_error(_run(tiny_model_dir, input_file, tmp_path / "out.jsonl", *flags), *fragments)
    assert not (tmp_path / "out.jsonl").exists()
    assert snapshot(tiny_model_dir) == before


def test_invalid_utf8_names_the_line(tiny_model_dir, tmp_path):
    source = tmp_path / "input.txt"
    source.write_bytes(b"fine\nalso fine\ncaf\xe9\n")
    assert_user_error(_run(tiny_model_dir, source, tmp_path / "out.jsonl"), f"{source}:3")


def test_missing_input_names_the_file(tiny_model_dir, tmp_path):
    missing = tmp_path / "nope.txt"
    assert_user_error(_run(tiny_model_dir, missing, tmp_path / "out.jsonl"), str(missing))


def test_damaged_checkpoint_names_the_path(damaged_model_dir, input_file, tmp_path):
    result = _run(damaged_model_dir, input_file, tmp_path / "out.jsonl")
    assert_user_error(result, os.path.join(damaged_model_dir, "model.ckpt"), "damaged")
    assert not (tmp_path / "out.jsonl").exists()


def test_nan_weights_never_reach_the_json(nan_model_dir, input_file, tmp_path):
    result = _run(nan_model_dir, input_file, tmp_path / "out.jsonl")
    assert_user_error(result, "pooler/bias", "NaN or Inf")
    assert os.listdir(tmp_path) == ["input.txt"]
