"""SentenceEncoder: MiniLM embeddings as transformers' outputs give them; strings == ids; the
[CLS] poolings equal the full encoder's with its last block at [CLS] alone."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.keras_tasks import SentenceEncoder
from bert_tf.models import BertEncoder
from tests.fixtures import TINY_CONFIG, without_dropout
from tests.keras_tasks.conftest import TEXTS
from tests.models.conftest import encoder_batch, record_layouts

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")


def test_minilm_mean_embeddings_match_transformers(minilm_hf_dir):
    reference = dict(np.load(os.path.join(TESTDATA, "minilm_reference.npz")))
    model = SentenceEncoder.from_pretrained(minilm_hf_dir)
    detached = SentenceEncoder(model.encoder, preprocessor=None)  # keras-hub's ids convention
    embeddings = detached.predict({"input_word_ids": reference["input_ids"],
                                   "input_mask": reference["attention_mask"],
                                   "input_type_ids": reference["token_type_ids"]}, verbose=0)
    # sentence-transformers' pooling, in numpy, over transformers' last_hidden_state.
    mask = reference["attention_mask"][..., None].astype(np.float64)
    mean = (reference["last_hidden_state"] * mask).sum(1) / mask.sum(1)
    expected = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    np.testing.assert_allclose(embeddings, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("pooling", ["mean", "cls", "cls_token", "max"])
def test_strings_give_the_embeddings_of_ids_and_survive_keras_save(tiny_model_dir, pooling,
                                                                   tmp_path):
    model = SentenceEncoder.from_pretrained(tiny_model_dir, pooling=pooling, normalize=False)
    embeddings = model.predict(TEXTS, batch_size=3, verbose=0)
    ids = model.preprocessor(tf.constant(TEXTS))
    np.testing.assert_allclose(embeddings, model(ids).numpy(), atol=1e-5, rtol=0)
    model.save(str(tmp_path / "encoder.keras"))
    loaded = keras.models.load_model(str(tmp_path / "encoder.keras"))
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0), embeddings, atol=1e-6, rtol=0)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("pooling", ["cls", "cls_token"])
def test_cls_poolings_equal_the_full_encoders_and_stop_its_last_block_at_cls(
        pooling, packed, monkeypatch):
    encoder = BertEncoder(without_dropout(TINY_CONFIG), packed_inference=packed)
    model = SentenceEncoder(encoder, pooling=pooling, normalize=False)
    inputs = encoder_batch()
    chosen = record_layouts(monkeypatch)
    embeddings = model(inputs, training=False).numpy()
    assert [layout.output_at_positions for layout in chosen] == [True]
    full = encoder(inputs, training=False)  # every position computed
    expected = full["pooled_output"] if pooling == "cls" else full["sequence_output"][:, 0]
    np.testing.assert_allclose(embeddings, expected, atol=1e-5, rtol=0)
