"""Training on real tokens only (`packed_training`) gives the padded path's values and gradients.

Without dropout the two layouts compute the same function at every real position, so the
gradients of every variable agree (to float32 rounding); with dropout the noise falls on other
elements, so only shapes and finiteness can be compared.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertEncoder, BertPretrainer
from tests.fixtures import TINY_CONFIG
from tests.models.test_packed_inference import _batch, _random_lengths

NO_DROPOUT = TINY_CONFIG.to_dict() | {"hidden_dropout_prob": 0.0,
                                      "attention_probs_dropout_prob": 0.0}


def _gradients(model, loss_fn, inputs, packed):
    model.encoder.packed_training = packed
    with tf.GradientTape() as tape:
        loss = loss_fn(model(inputs, training=True))
    return loss, tape.gradient(loss, model.trainable_variables)


def _assert_same_gradients(model, loss_fn, inputs):
    padded_loss, padded = _gradients(model, loss_fn, inputs, False)
    packed_loss, packed = _gradients(model, loss_fn, inputs, True)
    np.testing.assert_allclose(packed_loss, padded_loss, rtol=1e-5)
    for variable, p, q in zip(model.trainable_variables, packed, padded):
        assert (p is None) == (q is None), variable.path
        if p is None:  # no loss reads it (the pooler without NSP), in either layout
            continue
        np.testing.assert_allclose(tf.convert_to_tensor(p), tf.convert_to_tensor(q), atol=2e-5,
                                   rtol=1e-4, err_msg=variable.path)


class _EncoderOnly:
    """The encoder seen as a task model (`.encoder`, a call), for the shared helpers."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.trainable_variables = encoder.trainable_variables

    def __call__(self, inputs, training):
        return self.encoder(inputs, training=training)


# 3 rows leave 5 of the 8 attention groups empty: training runs them on empty tensors. 2
# groups: what fine-tuning on short rows attends in (`packing.training_attention_groups`).
@pytest.mark.parametrize("rows,groups", [(9, 8), (3, 8), (9, 2)])
def test_encoder_gradients_equal_the_padded_path(rows, groups):
    batch = _batch(_random_lengths(rows, seed=7))
    mask = tf.cast(batch["input_mask"], tf.float32)[..., tf.newaxis]
    weights = tf.random.stateless_normal([1, 1, TINY_CONFIG.hidden_size], [1, 2])

    def loss_fn(outputs):  # padded positions carry no loss (their values differ by layout)
        per_token = tf.reduce_sum(outputs["sequence_output"] * mask * weights)
        return per_token + tf.reduce_sum(outputs["pooled_output"] ** 2)

    encoder = BertEncoder(NO_DROPOUT, training_attention_groups=groups)
    _assert_same_gradients(_EncoderOnly(encoder), loss_fn, batch)


@pytest.mark.parametrize("use_next_sentence", [True, False])
def test_pretrainer_gradients_equal_the_padded_path(use_next_sentence):
    batch = _batch(_random_lengths(9, seed=8))
    lengths = batch["input_mask"].numpy().sum(1)
    positions = np.random.default_rng(9).integers(0, lengths[:, None], size=(len(lengths), 5))
    inputs = {**batch, "masked_lm_positions": tf.constant(positions, tf.int32)}
    labels = tf.random.stateless_uniform(positions.shape, [3, 4], maxval=TINY_CONFIG.vocab_size,
                                         dtype=tf.int32)

    def loss_fn(outputs):
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels, outputs["mlm_logits"]))
        if use_next_sentence:
            loss += tf.reduce_sum(outputs["nsp_logits"][:, 0])
        return loss

    model = BertPretrainer(BertEncoder(NO_DROPOUT), use_next_sentence=use_next_sentence)
    _assert_same_gradients(model, loss_fn, inputs)


def test_packed_training_with_dropout_runs_in_a_graph():
    batch = _batch(_random_lengths(6, seed=10))
    encoder = BertEncoder(TINY_CONFIG, packed_training=True)
    outputs = tf.function(lambda x: encoder(x, training=True))(batch)
    expected_shape = batch["input_mask"].shape + (TINY_CONFIG.hidden_size,)
    assert outputs["sequence_output"].shape == expected_shape
    assert np.isfinite(outputs["sequence_output"].numpy()).all()
    # Different noise from the padded path, but the same layout: padding stays zero.
    padding = ~batch["input_mask"].numpy().astype(bool)
    assert not outputs["sequence_output"].numpy()[padding].any()


def test_packed_training_is_in_the_config():
    encoder = BertEncoder(TINY_CONFIG, packed_training=True, training_attention_groups=3)
    restored = BertEncoder.from_config(encoder.get_config())
    assert restored.packed_training and restored.training_attention_groups == 3
