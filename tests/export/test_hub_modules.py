"""TF Hub-interface exports: the preprocessor and the reusable encoder, via TFSMLayer too."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export.restored_model import restore_model
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from tests.export.conftest import TINY_SEQ_LENGTH
from tests.fixtures import CASED_VOCAB

pytestmark = pytest.mark.slow

TEXTS = tf.constant([b"Arsenal beat Chelsea.", b"", b"caf\xc3\xa9 \xff news"])


def _assert_inputs_equal(got, expected):
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        np.testing.assert_array_equal(got[name].numpy(), expected[name].numpy())


def test_preprocessor_has_the_tf_hub_interface(hub_exports):
    model_dir, paths = hub_exports
    restored = restore_model(model_dir, "encoder")
    reference = BertPreprocessor(CASED_VOCAB, lower_case=restored.lower_case,
                                 seq_length=TINY_SEQ_LENGTH)
    preprocess = tf.saved_model.load(paths["preprocessor"])
    _assert_inputs_equal(preprocess(TEXTS), reference(TEXTS))
    tokens = preprocess.tokenize(TEXTS)
    assert tokens.to_list() == reference.tokenize(TEXTS).to_list()
    pair = [tokens, preprocess.tokenize(tf.constant(["a", "b", "c"]))]
    _assert_inputs_equal(preprocess.bert_pack_inputs(pair, seq_length=128),
                         reference.bert_pack_inputs(pair, seq_length=128))
    special = {k: int(v) for k, v in preprocess.tokenize.get_special_tokens_dict().items()}
    tokenizer = reference.tokenizer
    assert special == {"vocab_size": tokenizer.vocab_size, "padding_id": tokenizer.pad_id,
                       "start_of_sequence_id": tokenizer.cls_id,
                       "end_of_segment_id": tokenizer.sep_id, "mask_id": tokenizer.mask_id}
    with open(preprocess.vocab_file.asset_path.numpy(), encoding="utf-8") as f:
        assert f.read().splitlines()[0] == "[PAD]"


def test_encoder_has_the_tf_hub_interface(hub_exports):
    model_dir, paths = hub_exports
    encoder = restore_model(model_dir, "encoder").encoder
    inputs = BertPreprocessor(CASED_VOCAB, lower_case=False, seq_length=TINY_SEQ_LENGTH)(TEXTS)
    expected = encoder(inputs, training=False)
    hub_encoder = tf.saved_model.load(paths["hub_encoder"])
    outputs = hub_encoder(inputs)
    np.testing.assert_allclose(outputs["pooled_output"].numpy(),
                               expected["pooled_output"].numpy(), atol=1e-5)
    assert len(outputs["encoder_outputs"]) == encoder.config.num_hidden_layers
    np.testing.assert_allclose(outputs["encoder_outputs"][-1].numpy(),
                               expected["sequence_output"].numpy(), atol=1e-5)
    assert len(hub_encoder.trainable_variables) == len(encoder.trainable_variables)


def test_tfsm_layers_chain_preprocessor_and_encoder(hub_exports):
    model_dir, paths = hub_exports
    preprocess = keras.layers.TFSMLayer(paths["preprocessor"])  # endpoint "serve"
    encoder = keras.layers.TFSMLayer(paths["hub_encoder"])
    outputs = encoder(preprocess(TEXTS))
    reference = restore_model(model_dir, "encoder").encoder
    inputs = BertPreprocessor(CASED_VOCAB, lower_case=False, seq_length=TINY_SEQ_LENGTH)(TEXTS)
    np.testing.assert_allclose(outputs["sequence_output"].numpy(),
                               reference(inputs)["sequence_output"].numpy(), atol=1e-5)
    assert sorted(outputs) == ["encoder_outputs_0", "encoder_outputs_1", "pooled_output",
                               "sequence_output"]


def test_tfsm_layers_in_the_tutorials_arrangement_make_a_keras_model(hub_exports):
    """tensorflow.org's "Classify text with BERT", `TFSMLayer` where it has `hub.KerasLayer`."""
    model_dir, paths = hub_exports
    text_input = keras.Input(shape=(), dtype="string", name="text")
    preprocessing_layer = keras.layers.TFSMLayer(paths["preprocessor"],
                                                 call_endpoint="serving_default")
    encoder = keras.layers.TFSMLayer(paths["hub_encoder"], call_endpoint="serving_default")
    outputs = encoder(preprocessing_layer(text_input))
    model = keras.Model(text_input, outputs["pooled_output"])
    reference = restore_model(model_dir, "encoder").encoder
    inputs = BertPreprocessor(CASED_VOCAB, lower_case=False, seq_length=TINY_SEQ_LENGTH)(TEXTS)
    np.testing.assert_allclose(model.predict(TEXTS, verbose=0),
                               reference(inputs)["pooled_output"].numpy(), atol=1e-5)
