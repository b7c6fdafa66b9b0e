"""BertPretrainer: tied masked-LM logits, the NSP head, the objective ablations; the harness."""


import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertEncoder, BertPretrainer
from bert_tf.models.bert_pretrainer import build_pretrainer
from tests.fixtures import TINY_CONFIG, without_dropout
from tests.harness import run_harness
from tests.models.conftest import encoder_batch

POSITIONS = tf.constant([[1, 2], [0, 3], [4, 4]])

CASES = {
    "pretrainer": (lambda e: BertPretrainer(e),
                   {"mlm_logits": (3, 2, TINY_CONFIG.vocab_size), "nsp_logits": (3, 2)}, ()),
    "mlm_only": (lambda e: BertPretrainer(e, use_next_sentence=False),
                 {"mlm_logits": (3, 2, TINY_CONFIG.vocab_size)}, ("pooler/",)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_harness(name, tmp_path):
    build, expected, untrained = CASES[name]
    inputs = dict(encoder_batch(), masked_lm_positions=POSITIONS)
    run_harness(lambda: build(BertEncoder(TINY_CONFIG)), inputs, expected, tmp_path,
                float32_outputs=True, untrained=untrained)


def test_masked_lm_logits_use_tied_embeddings():
    pretrainer = BertPretrainer(BertEncoder(TINY_CONFIG))
    batch = dict(encoder_batch(), masked_lm_positions=POSITIONS)
    logits = pretrainer(batch)["mlm_logits"].numpy()
    head = pretrainer.masked_lm
    sequence = pretrainer.encoder(batch)["sequence_output"].numpy()
    gathered = np.take_along_axis(sequence, POSITIONS.numpy()[..., None], axis=1)
    kernel, bias = (w.numpy() for w in head.transform.weights)
    hidden = keras.activations.gelu(gathered @ kernel + bias, approximate=False).numpy()
    gamma, beta = (w.numpy() for w in head.layer_norm.weights)
    mean, var = hidden.mean(-1, keepdims=True), hidden.var(-1, keepdims=True)
    hidden = (hidden - mean) / np.sqrt(var + TINY_CONFIG.layer_norm_eps) * gamma + beta
    table = pretrainer.encoder.embeddings.word_embeddings.embeddings.numpy()
    np.testing.assert_allclose(logits, hidden @ table.T + head.output_bias.numpy(), atol=1e-5)


@pytest.mark.parametrize("kwargs, causal, heads", [
    ({}, False, ["encoder", "masked_lm", "next_sentence"]),
    ({"use_next_sentence": False}, False, ["encoder", "masked_lm"]),
    ({"left_to_right": True}, True, ["encoder", "masked_lm"]),
])
def test_build_pretrainer_objectives(kwargs, causal, heads):
    pretrainer = build_pretrainer(TINY_CONFIG, **kwargs)
    assert pretrainer.encoder.causal_attention is causal
    assert sorted(pretrainer.checkpoint_items()) == heads


@pytest.mark.parametrize("left_to_right", [False, True])
def test_training_last_block_at_positions_equals_full_block(left_to_right):
    # In training the last block runs only at [CLS] and the masked positions; outputs and
    # gradients must equal the functional graph's full [B, S, H] computation (no dropout).
    config = without_dropout(TINY_CONFIG)
    pretrainer = build_pretrainer(config, left_to_right=left_to_right)
    batch = dict(encoder_batch(), masked_lm_positions=POSITIONS)

    def outputs_and_gradients(call):
        with tf.GradientTape() as tape:
            outputs = call(batch, training=True)
            loss = sum(tf.reduce_sum(tf.sin(v)) for v in outputs.values())
        return outputs, tape.gradient(loss, pretrainer.trainable_variables)

    sparse, sparse_gradients = outputs_and_gradients(pretrainer)
    full, full_gradients = outputs_and_gradients(super(BertPretrainer, pretrainer).call)
    assert sorted(sparse) == sorted(full)
    for name in full:
        np.testing.assert_allclose(sparse[name], full[name], atol=1e-5)
    for variable, a, b in zip(pretrainer.trainable_variables, sparse_gradients, full_gradients):
        assert (a is None) == (b is None), variable.path  # MLM-only: the pooler has none
        if a is not None:
            np.testing.assert_allclose(tf.convert_to_tensor(a), tf.convert_to_tensor(b), atol=1e-5,
                                       err_msg=variable.path)
