"""A keras-hub backbone saved without its tokenizer (`backbone.save_to_preset`): described as
such, read as an encoder, converted with the vocab the user gives."""

import os
import shutil

import numpy as np
import pytest

from bert_tf import BertEncoder
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.registry import describe_folder
from bert_tf.errors import CheckpointError

BACKBONE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata", "keras_hub",
                        "backbone")
VOCAB = os.path.join(BACKBONE, "assets", "tokenizer", "vocabulary.txt")


@pytest.fixture
def backbone_only(tmp_path):
    folder = str(tmp_path / "backbone")
    shutil.copytree(BACKBONE, folder, ignore=shutil.ignore_patterns("tokenizer.json", "assets"))
    return folder


def test_it_is_described_as_missing_its_tokenizer_and_reads_as_an_encoder(backbone_only):
    described = describe_folder(backbone_only)
    assert "saved without its tokenizer" in described.title and "--vocab_file" in str(described)
    ids = {"input_word_ids": np.array([[2, 9, 17, 3]], np.int32),
           "input_mask": np.ones([1, 4], np.int32), "input_type_ids": np.zeros([1, 4], np.int32)}
    got = BertEncoder.from_pretrained(backbone_only)(ids)["sequence_output"]
    expected = BertEncoder.from_pretrained(BACKBONE)(ids)["sequence_output"]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_it_converts_with_a_vocab_file_and_refuses_one_beside_its_own(backbone_only, tmp_path):
    output = str(tmp_path / "model")
    convert_checkpoint("keras_hub", backbone_only, "model_dir", output, do_lower_case=True,
                       vocab_file=VOCAB)
    with open(os.path.join(output, "vocab.txt"), encoding="utf-8") as f, \
            open(VOCAB, encoding="utf-8") as expected:
        assert f.read().split() == expected.read().split()
    with pytest.raises(CheckpointError, match="has its own vocabulary .*; drop --vocab_file"):
        convert_checkpoint("keras_hub", BACKBONE, "model_dir", str(tmp_path / "again"),
                           vocab_file=VOCAB)
