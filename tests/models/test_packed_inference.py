"""Inference on real tokens only (`packed_inference`) equals the padded computation.

Every head, on random lengths from [CLS]-only to the longest in one batch, a batch of one and
an empty batch; float32 to 1e-5, mixed_bfloat16 within its rounding.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.dtype_policy import policy_scope
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from tests.fixtures import TINY_CONFIG

SEQ = 16


def _batch(lengths, seed=0):
    """Encoder inputs whose row i has `lengths[i]` real tokens ([CLS] first)."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, np.int32)
    mask = (np.arange(SEQ)[None] < lengths[:, None]).astype(np.int32).reshape(-1, SEQ)
    ids = rng.integers(5, TINY_CONFIG.vocab_size, size=mask.shape).astype(np.int32) * mask
    ids[:, 0] = 2
    types = (np.arange(SEQ)[None] >= lengths[:, None] // 2).astype(np.int32) * mask
    return {"input_word_ids": tf.constant(ids), "input_mask": tf.constant(mask),
            "input_type_ids": tf.constant(types)}


def _random_lengths(count, seed=1):
    lengths = np.random.default_rng(seed).integers(1, SEQ + 1, size=count)
    lengths[:2] = [1, SEQ]  # [CLS] only and full length in the same batch
    return lengths


HEADS = {
    "encoder": lambda e: e,
    "pretrainer": lambda e: BertPretrainer(e),
    "classifier": lambda e: BertClassifier(e, num_classes=3),
    "token_classifier": lambda e: BertTokenClassifier(e, num_classes=4),
    "span_labeler": lambda e: BertSpanLabeler(e),
    "multiple_choice": lambda e: BertMultipleChoice(e, num_choices=2),
}


def _inputs(head, batch):
    if head == "pretrainer":
        positions = np.minimum(np.arange(3)[None], batch["input_mask"].numpy().sum(1)[:, None] - 1)
        return {**batch, "masked_lm_positions": tf.constant(positions, tf.int32)}
    if head == "multiple_choice":
        return {k: tf.stack([v, tf.reverse(v, [0])], axis=1) for k, v in batch.items()}
    return batch


def _outputs(model, inputs, packed):
    encoder = model.encoder if hasattr(model, "encoder") else model
    encoder.packed_inference = packed
    return tf.function(lambda x: model(x, training=False))(inputs)


def _assert_equal_at_real_positions(packed, padded, mask, atol):
    for p, q in zip(tf.nest.flatten(packed), tf.nest.flatten(padded)):
        p, q = np.asarray(p, np.float32), np.asarray(q, np.float32)
        assert p.shape == q.shape
        if p.ndim >= 2 and p.shape[:2] == mask.shape:  # per-token outputs: real positions
            p, q = p[mask], q[mask]
        np.testing.assert_allclose(p, q, atol=atol, rtol=0)


LENGTHS = {"random": _random_lengths(11), "one_full": [SEQ], "one_cls": [1], "empty": []}


@pytest.fixture(scope="module")
def traced():
    """`traced(head, inputs)` -> `{packed: function}`: the head on a tiny encoder, traced once
    per layout for every batch size (the batch dimension unknown, as in `predict` and serving),
    so the length cases of one head share two traces."""
    functions = {}

    def get(head, inputs):
        if head not in functions:
            model = HEADS[head](BertEncoder(TINY_CONFIG))
            encoder = model.encoder if hasattr(model, "encoder") else model
            signature = tf.nest.map_structure(
                lambda t: tf.TensorSpec([None, *t.shape[1:]], t.dtype), inputs)
            functions[head] = {}
            for packed in (True, False):
                encoder.packed_inference = packed  # read when traced, just below
                function = tf.function(lambda x: model(x, training=False),
                                       input_signature=[signature])
                function.get_concrete_function()
                functions[head][packed] = function
        return functions[head]

    return get


@pytest.mark.parametrize("head,lengths", [(h, name) for h in sorted(HEADS) for name in LENGTHS])
def test_packed_equals_padded(head, lengths, traced):
    batch = _batch(LENGTHS[lengths])
    inputs = _inputs(head, batch)
    mask = batch["input_mask"].numpy().astype(bool)
    functions = traced(head, inputs)
    _assert_equal_at_real_positions(functions[True](inputs), functions[False](inputs), mask,
                                    atol=1e-5)


def test_packed_sequence_output_is_zero_at_padding_and_equal_per_layer():
    encoder = BertEncoder(TINY_CONFIG)
    batch = _batch(_random_lengths(9, seed=3))
    mask = batch["input_mask"].numpy().astype(bool)
    packed, padded = _outputs(encoder, batch, True), _outputs(encoder, batch, False)
    assert not packed["sequence_output"].numpy()[~mask].any()
    for p, q in zip(packed["encoder_outputs"], padded["encoder_outputs"]):
        np.testing.assert_allclose(p.numpy()[mask], q.numpy()[mask], atol=1e-5, rtol=0)


def test_packed_equals_padded_in_bfloat16_within_its_rounding():
    batch = _batch(_random_lengths(11, seed=4))
    mask = batch["input_mask"].numpy().astype(bool)
    with policy_scope("mixed_bfloat16"):
        encoder = BertEncoder(TINY_CONFIG)
        packed, padded = _outputs(encoder, batch, True), _outputs(encoder, batch, False)
    p = packed["sequence_output"].numpy().astype(np.float32)[mask]
    q = padded["sequence_output"].numpy().astype(np.float32)[mask]
    # bfloat16 keeps 8 mantissa bits: values of LayerNorm scale (~1) round at ~4e-3; the
    # two paths round in different places, so allow a few such steps.
    np.testing.assert_allclose(p, q, atol=0.05, rtol=0)
    assert np.abs(p - q).mean() < 5e-3


def test_training_keeps_the_padded_computation():
    batch = _batch([3, SEQ])
    mask = batch["input_mask"].numpy().astype(bool)
    # Without dropout, training=True gives the padded path's values, padding included.
    config = TINY_CONFIG.to_dict() | {"hidden_dropout_prob": 0.0,
                                      "attention_probs_dropout_prob": 0.0}
    encoder = BertEncoder(config)
    trained = encoder(batch, training=True)["sequence_output"].numpy()
    encoder.packed_inference = False
    padded = encoder(batch, training=False)["sequence_output"].numpy()
    np.testing.assert_allclose(trained, padded, atol=1e-6)
    assert trained[~mask].any()


def test_pooled_output_agrees_when_the_first_position_is_padding():
    # A row whose [CLS] slot is masked out: packed and padded read the same (zero) state.
    batch = _batch([4, SEQ, 3])
    mask = batch["input_mask"].numpy()
    mask[0, 0] = 0
    batch["input_mask"] = tf.constant(mask)
    encoder = BertEncoder(TINY_CONFIG)
    packed, padded = _outputs(encoder, batch, True), _outputs(encoder, batch, False)
    np.testing.assert_allclose(packed["pooled_output"], padded["pooled_output"], atol=1e-6)
    np.testing.assert_allclose(packed["pooled_output"][0],
                               np.tanh(encoder.pooler.bias.numpy()), atol=1e-6)


@pytest.mark.parametrize("packed", [True, False])
def test_output_positions_equal_the_full_output_there(packed):
    batch = _batch(_random_lengths(7, seed=5))
    lengths = batch["input_mask"].numpy().sum(1)
    positions = np.random.default_rng(6).integers(0, lengths[:, None], size=(len(lengths), 4))
    encoder = BertEncoder(TINY_CONFIG)
    encoder.packed_inference = packed
    full = encoder(batch, training=False)
    at = tf.function(lambda x, p: encoder(x, training=False, output_positions=p))(
        batch, tf.constant(positions, tf.int32))
    expected = np.take_along_axis(full["sequence_output"].numpy(), positions[..., None], 1)
    assert at["sequence_output"].shape == expected.shape
    np.testing.assert_allclose(at["sequence_output"], expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(at["pooled_output"], full["pooled_output"], atol=1e-5, rtol=0)
