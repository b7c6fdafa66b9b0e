"""The model directory: model_info.json written and read, casing checks, damaged and NaN weights."""

import glob
import json
import logging
import os

import numpy as np
import pytest

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.model_dir import (
    read_model_info,
    resolve_lower_case,
    write_model_dir,
    write_model_info,
)
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.export.exporter import export_seq_length
from bert_tf.models.bert_encoder import BertEncoder

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "testdata")
CASED_VOCAB = os.path.join(TESTDATA, "tokenization", "bbc_cased_vocab.txt")


def _config():
    with open(CASED_VOCAB, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    return BertConfig(vocab_size=vocab_size, hidden_size=8, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=8, max_position_embeddings=32)


@pytest.fixture
def model_dir(tmp_path):
    path = str(tmp_path / "model")
    write_model_dir(path, _config(), CASED_VOCAB, encoder=BertEncoder(_config()))
    return path


def test_model_info_round_trip_and_old_task_names(model_dir):
    write_model_info(model_dir, head="classifier", do_lower_case=False, max_seq_length=24,
                     label_names=["a", "b"])
    assert read_model_info(model_dir) == {"head": "classifier", "do_lower_case": False,
                                          "max_seq_length": 24, "label_names": ["a", "b"]}
    assert export_seq_length(model_dir, "classifier") == 24  # the saved length, not 128
    assert export_seq_length(model_dir, "classifier", seq_length=16) == 16
    # Written before `head` existed (run_pretraining's `task`): read as the model class name.
    write_model_info(model_dir, task="pretraining", step=3)
    assert read_model_info(model_dir)["head"] == "pretrainer"


@pytest.mark.parametrize("info, fragment", [
    ({"head": "ner"}, "`head` must be one of encoder"),
    ({"do_lower_case": "yes"}, "`do_lower_case` must be true or false"),
    ({"max_seq_length": 1}, "`max_seq_length` must be an integer of at least 3"),
])
def test_bad_model_info_names_file_and_key(model_dir, info, fragment):
    path = os.path.join(model_dir, "model_info.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(info, f)
    with pytest.raises(CheckpointError, match=f"{path}: {fragment}"):
        read_model_info(model_dir)
    with pytest.raises(CheckpointError, match=fragment):
        write_model_info(model_dir, **info)


def test_casing_comes_from_model_info_and_a_contradiction_is_an_error(model_dir):
    write_model_info(model_dir, head="encoder", do_lower_case=True)
    assert resolve_lower_case(model_dir)[1] is True  # recorded, though the vocab is cased
    with pytest.raises(CheckpointError, match=r"--do_lower_case=False contradicts .*"
                                              r"model_info.json \(do_lower_case: true\)"):
        resolve_lower_case(model_dir, do_lower_case=False)


def test_old_directory_falls_back_to_the_vocab_guess_with_a_warning(model_dir, caplog):
    with caplog.at_level(logging.WARNING):
        assert resolve_lower_case(model_dir)[1] is False  # the cased vocab
    assert "No do_lower_case recorded" in caplog.text


def test_damaged_checkpoint_names_its_path(model_dir):
    (data,) = glob.glob(os.path.join(model_dir, "model.ckpt.data-*"))
    with open(data, "rb") as f:
        content = f.read()
    with open(data, "wb") as f:
        f.write(content[:len(content) // 3])
    with pytest.raises(CheckpointError, match=f"Checkpoint {model_dir}/model.ckpt is damaged"):
        BertEncoder.from_pretrained(model_dir)


def test_nan_weights_are_refused_by_name(tmp_path):
    encoder = BertEncoder(_config())
    encoder.pooler.kernel.assign(np.full(encoder.pooler.kernel.shape, np.inf, np.float32))
    path = str(tmp_path / "nan")
    write_model_dir(path, _config(), CASED_VOCAB, encoder=encoder)
    with pytest.raises(CheckpointError, match=r"`pooler/kernel` holds NaN or Inf"):
        BertEncoder.from_pretrained(path)


def test_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        model_dir_lib.model_checkpoint_path(str(tmp_path / "nope"))
