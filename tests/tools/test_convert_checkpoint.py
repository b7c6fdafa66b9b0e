"""tools/convert_checkpoint.py as a user runs it: damaged, NaN and existing outputs refused.

The conversion runs in a fresh interpreter (the whole program, as a user starts it); the refusals
run its `__main__` in this process (`call_entry_point`: the same flags, exit code and one error
line, without ~4 s of TensorFlow start-up each). A refusal's console in a fresh interpreter is
tests/checkpoints/test_convert_checkpoint_tool.py::test_cli_user_mistake_is_one_line_not_a_traceback.
"""

import json
import os
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot

TOOL = "tools/convert_checkpoint.py"

TINY_HF = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata",
                       "tiny_hf_pretraining")


@pytest.fixture
def hf_copy(tmp_path):
    path = tmp_path / "hf"
    shutil.copytree(TINY_HF, path)
    return path


def _convert(hf_dir, output_dir, *flags, run=call_entry_point):
    return run(TOOL, "--from=huggingface", f"--input={hf_dir}", f"--output_dir={output_dir}",
               *flags)


@pytest.mark.subprocess
def test_conversion_writes_model_info(hf_copy, tmp_path):
    (hf_copy / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    result = _convert(hf_copy, tmp_path / "model", run=run_entry_point)
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads((tmp_path / "model" / "model_info.json").read_text())
    assert info["head"] == "pretrainer" and info["do_lower_case"] is True


def test_nan_tensor_is_refused_by_name(hf_copy, tmp_path):
    tensors = load_file(str(hf_copy / "model.safetensors"))
    name = sorted(key for key in tensors if key.endswith("pooler.dense.bias"))[0]
    tensors[name] = np.full_like(tensors[name], np.nan)
    save_file(tensors, str(hf_copy / "model.safetensors"), metadata={"format": "pt"})
    assert_user_error(_convert(hf_copy, tmp_path / "model"), "pooler.dense.bias",
                      "NaN or Inf", "nothing was converted")
    assert not (tmp_path / "model").exists()


def test_truncated_safetensors_names_the_file(hf_copy, tmp_path):
    weights = hf_copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    assert_user_error(_convert(hf_copy, tmp_path / "model"), str(weights))


def test_existing_output_dir_is_refused_and_kept(hf_copy, tmp_path):
    output = tmp_path / "model"
    output.mkdir()
    (output / "bert_config.json").write_text('{"precious": 1}')
    before = snapshot(str(output))
    assert_user_error(_convert(hf_copy, output), str(output), "already exists")
    assert snapshot(str(output)) == before


def test_casing_flag_contradicting_tokenizer_config(hf_copy, tmp_path):
    (hf_copy / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    assert_user_error(_convert(hf_copy, tmp_path / "model", "--do_lower_case=false"),
                      "--do_lower_case=False contradicts", "tokenizer_config.json")


@pytest.mark.parametrize("flags, fragments", [
    (["--from=onnx", "--input=x", "--output_dir=y"], ["--from"]),
    (["--input=x", "--output_dir=y"], ["No such checkpoint folder: x"]),  # --from detected
    (["--output_dir=y"], ["--input and --output_dir are required", "--describe"]),
    (["--from=huggingface", "--input=/no/such/folder", "--output_dir=y"], ["/no/such/folder"]),
    (["--from=ours", "--to=huggingface", "--input=x", "--output_dir=y", "--do_lower_case"],
     ["does not apply to --to=huggingface"]),
])
def test_bad_flags(flags, fragments):
    assert_user_error(call_entry_point(TOOL, *flags), *fragments)


def test_damaged_model_dir_to_huggingface(damaged_model_dir, tmp_path):
    result = call_entry_point(TOOL, "--from=ours", "--to=huggingface",
                      f"--input={damaged_model_dir}", f"--output_dir={tmp_path / 'hf'}")
    assert_user_error(result, os.path.join(damaged_model_dir, "model.ckpt"), "damaged")
