"""tools/convert_checkpoint.py: the CLI end to end, and the dispatcher's refusals."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.models.bert_encoder import BertEncoder
from tests.checkpoints.conftest import list_in_index
from tests.entry_points import assert_user_error, call_entry_point
from tests.fixtures import MODEL_GARDEN

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "convert_checkpoint.py")
TF_HUB = os.path.join(ROOT, "tests", "testdata", "tf_hub")
HF_PRETRAINING = os.path.join(ROOT, "tests", "testdata", "hf_tasks", "pretraining_pt")
HF_SHARDED_TF = os.path.join(ROOT, "tests", "testdata", "hf_tasks", "pretraining_sharded_tf")


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


@pytest.mark.parametrize("broken", ["missing shard", "weight not in its shard"])
def test_broken_tf_shards_are_one_line_errors(tmp_path, broken):
    folder = tmp_path / "sharded"
    shutil.copytree(HF_SHARDED_TF, folder)
    index = str(folder / "tf_model.h5.index.json")
    if broken == "missing shard":
        os.remove(folder / "tf_model-00003-of-00003.h5")
        fragment = "names shard 'tf_model-00003-of-00003.h5', which is not in"
    else:
        list_in_index(str(folder), "tf_model.h5.index.json", "tf_bert_for_pre_training/x:0",
                     "tf_model-00001-of-00003.h5")
        fragment = "puts `tf_bert_for_pre_training/x:0` in tf_model-00001-of-00003.h5"
    for args in ([f"--describe={folder}"],
                 [f"--input={folder}", f"--output_dir={tmp_path / 'out'}"]):
        assert_user_error(call_entry_point("tools/convert_checkpoint.py", *args), index,
                          fragment)
    assert not (tmp_path / "out").exists()


def test_dispatcher_round_trip(tiny_hf_dir, tmp_path):
    model_dir, hf_dir = str(tmp_path / "model"), str(tmp_path / "hf")
    convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", model_dir)
    assert BertEncoder.from_pretrained(model_dir).config.num_hidden_layers == 2
    convert_checkpoint("ours", model_dir, "huggingface", hf_dir)
    assert sorted(os.listdir(hf_dir)) == ["config.json", "model.safetensors",
                                          "special_tokens_map.json", "tokenizer.json",
                                          "tokenizer_config.json", "vocab.txt"]


def test_dispatcher_refuses_pointless_or_wrong_arguments(tmp_path):
    with pytest.raises(ValueError, match="is a copy"):
        convert_checkpoint("ours", str(tmp_path), "model_dir", str(tmp_path / "out"))
    with pytest.raises(ValueError, match="vocab_file applies to google_research and keras_hub "
                                         "checkpoints only"):
        convert_checkpoint("huggingface", str(tmp_path), "model_dir", str(tmp_path / "out"),
                           vocab_file="vocab.txt")
    with pytest.raises(ValueError, match="sources are"):
        convert_checkpoint("onnx", str(tmp_path), "model_dir", str(tmp_path / "out"))


def test_copy_pooler_dense_to_encoder_flag_reads_the_next_sentence_pooler(tmp_path):
    """The model directory's pooled output is Model Garden's NSP pooler's, not the encoder's."""
    reference = np.load(os.path.join(MODEL_GARDEN, "model_garden_reference.npz"))
    expected = reference["pretrainer_nsp/next_sentence_pooled_output"]
    assert not np.allclose(expected, reference["pretrainer_nsp/pooled_output"], atol=1e-3)
    output_dir = tmp_path / "model"
    result = call_entry_point("tools/convert_checkpoint.py",
                              f"--input={MODEL_GARDEN}/pretrainer_nsp",
                              f"--output_dir={output_dir}", "--copy_pooler_dense_to_encoder",
                              "--do_lower_case")
    assert result.returncode == 0, result.stderr[-3000:]
    encoder = BertEncoder.from_pretrained(str(output_dir))
    inputs = {key: reference[key] for key in ("input_word_ids", "input_mask", "input_type_ids")}
    np.testing.assert_allclose(encoder(inputs)["pooled_output"].numpy(), expected, atol=1e-5)


def test_preprocess_dir_flag_reaches_the_tf_hub_reader(tmp_path):
    """A preprocessing model converts; an encoder given as one is refused by the reader."""
    encoder = os.path.join(TF_HUB, "bert_uncased_tiny")
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={encoder}",
                              f"--preprocess_dir={encoder}_preprocess",
                              f"--output_dir={tmp_path / 'model'}")
    assert result.returncode == 0, result.stderr[-3000:]
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={encoder}",
                              f"--preprocess_dir={encoder}", f"--output_dir={tmp_path / 'no'}")
    assert_user_error(result, "a TF Hub encoder, not a preprocessing")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("flag, source, owner", [
    ("--copy_pooler_dense_to_encoder", HF_PRETRAINING, "model_garden"),
    (f"--preprocess_dir={TF_HUB}/bert_uncased_tiny_preprocess", f"{MODEL_GARDEN}/encoder",
     "tf_hub"),
])
def test_format_flag_for_another_format_is_one_line(tmp_path, flag, source, owner):
    """A format's own flag for another format's input: one line, exit 1, nothing written."""
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={source}", flag,
                              f"--output_dir={tmp_path / 'out'}")
    assert_user_error(result, f"{flag.split('=')[0]} applies to {owner} checkpoints only",
                      f"not to {source}")
    assert not (tmp_path / "out").exists()
