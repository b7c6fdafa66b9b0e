"""tools/convert_checkpoint.py: the CLI end to end, and the dispatcher's refusals."""

import os
import subprocess
import sys

import pytest

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.models.bert_encoder import BertEncoder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "convert_checkpoint.py")


def _run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


@pytest.mark.slow
def test_cli_user_mistake_is_one_line_not_a_traceback(tmp_path):
    # Runs the real entry point: flags reach the library, whose error becomes the message.
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04")
    result = _run_tool("--from=huggingface", f"--input={tmp_path}",
                       f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1
    assert "pytorch_model.bin, a Python pickle" in result.stderr
    assert "Traceback" not in result.stderr


def test_dispatcher_round_trip(tiny_hf_dir, tmp_path):
    model_dir, hf_dir = str(tmp_path / "model"), str(tmp_path / "hf")
    convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", model_dir)
    assert BertEncoder.from_pretrained(model_dir).config.num_hidden_layers == 2
    convert_checkpoint("ours", model_dir, "huggingface", hf_dir)
    assert sorted(os.listdir(hf_dir)) == ["config.json", "model.safetensors",
                                          "tokenizer_config.json", "vocab.txt"]


def test_dispatcher_refuses_pointless_or_wrong_arguments(tmp_path):
    with pytest.raises(ValueError, match="is a copy"):
        convert_checkpoint("ours", str(tmp_path), "model_dir", str(tmp_path / "out"))
    with pytest.raises(ValueError, match="google_research checkpoints only"):
        convert_checkpoint("huggingface", str(tmp_path), "model_dir", str(tmp_path / "out"),
                           vocab_file="vocab.txt")
    with pytest.raises(ValueError, match="sources are"):
        convert_checkpoint("onnx", str(tmp_path), "model_dir", str(tmp_path / "out"))
