"""A `SentenceEncoder(truncate_dim=...)` written as a sentence-transformers folder keeps its
truncation: `config_sentence_transformers.json`'s `truncate_dim`, the key sentence-transformers 6
writes and reads (`SentenceTransformer._get_model_config`), read back by bert_tf."""

import json
import os
import shutil

import numpy as np
import pytest

from bert_tf.checkpoints import write_sentence_transformers_folder
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.huggingface.sentence_transformers import (
    MODEL_CONFIG_FILE,
    read_sentence_pooling,
)
from bert_tf.errors import CheckpointError
from bert_tf.keras_tasks import SentenceEncoder
from tests.fixtures import write_tiny_model_dir

SENTENCES = ["Hello there.", "A man plays the guitar on a stage."]
TRUNCATE_DIM = 8  # of the tiny model's 12


@pytest.fixture(scope="module")
def truncated(tmp_path_factory):
    """(the encoder, its sentence-transformers folder) of a tiny encoder truncated to 8."""
    model_dir = str(tmp_path_factory.mktemp("tiny") / "model")
    write_tiny_model_dir(model_dir)
    encoder = SentenceEncoder.from_pretrained(model_dir, truncate_dim=TRUNCATE_DIM)
    folder = str(tmp_path_factory.mktemp("truncated") / "st")
    write_sentence_transformers_folder(encoder, folder)
    return encoder, folder


def test_truncate_dim_is_written_as_sentence_transformers_writes_it(truncated):
    _, folder = truncated
    with open(os.path.join(folder, MODEL_CONFIG_FILE), encoding="utf-8") as f:
        assert json.load(f) == {"truncate_dim": TRUNCATE_DIM}
    assert read_sentence_pooling(folder).truncate_dim == TRUNCATE_DIM


def test_the_folder_embeds_as_the_truncated_encoder(truncated):
    encoder, folder = truncated
    back = SentenceEncoder.from_pretrained(folder)
    assert back.truncate_dim == TRUNCATE_DIM
    embeddings = back.predict(SENTENCES, verbose=0)
    assert embeddings.shape == (2, TRUNCATE_DIM)
    np.testing.assert_allclose(embeddings, encoder.predict(SENTENCES, verbose=0), atol=1e-6)
    # An argument still overrides the folder's.
    assert SentenceEncoder.from_pretrained(folder, truncate_dim=4).truncate_dim == 4


def test_a_conversion_keeps_it(truncated, tmp_path):
    _, folder = truncated
    convert_checkpoint(None, folder, "sentence_transformers", str(tmp_path / "again"))
    assert read_sentence_pooling(str(tmp_path / "again")).truncate_dim == TRUNCATE_DIM


def test_an_untruncated_encoder_writes_no_model_config(tmp_path):
    model_dir = str(tmp_path / "model")
    write_tiny_model_dir(model_dir)
    folder = write_sentence_transformers_folder(SentenceEncoder.from_pretrained(model_dir),
                                                str(tmp_path / "st"))
    assert not os.path.exists(os.path.join(folder, MODEL_CONFIG_FILE))
    assert read_sentence_pooling(folder).truncate_dim is None


@pytest.mark.parametrize("value", [0, "8", 2.5, True])
def test_a_damaged_truncate_dim_is_one_line(truncated, tmp_path, value):
    _, folder = truncated
    damaged = shutil.copytree(folder, str(tmp_path / "damaged"))
    with open(os.path.join(damaged, MODEL_CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump({"truncate_dim": value}, f)
    with pytest.raises(CheckpointError, match="truncate_dim must be an integer >= 1"):
        read_sentence_pooling(damaged)
