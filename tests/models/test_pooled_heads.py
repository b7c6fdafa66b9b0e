"""Heads on the pooled output stop the encoder's last block at [CLS]: the logits and every
gradient equal a head on the full encoder's [CLS] state, padded or packed, in training too."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertClassifier, BertEncoder, BertMultipleChoice
from tests.fixtures import TINY_CONFIG, without_dropout
from tests.models.conftest import encoder_batch, record_layouts

SETTINGS = {"padded": {"packed_inference": False},
            "packed": {"packed_training": True, "packed_inference": True}}


def _full_logits(model, inputs):
    """The head on the pooler of the full encoder's [CLS] state: every position computed."""
    sequence = model.encoder(inputs, training=False)["sequence_output"]  # [B, S, H]
    return model.head(model.encoder.pooler(sequence[:, 0]))


def _logits_and_gradients(model, inputs, logits_of):
    with tf.GradientTape() as tape:
        logits = logits_of(model, inputs)
        loss = tf.reduce_sum(tf.square(logits))
    return logits.numpy(), tape.gradient(loss, model.trainable_variables)


@pytest.mark.parametrize("layout", SETTINGS)
def test_classifier_equals_the_full_encoder_and_computes_cls_only(layout, monkeypatch):
    model = BertClassifier(
        BertEncoder(without_dropout(TINY_CONFIG), **SETTINGS[layout]), num_classes=3)
    inputs = encoder_batch()
    chosen = record_layouts(monkeypatch)
    # training=True: dropout is off in the config, and packed training applies.
    logits, gradients = _logits_and_gradients(
        model, inputs, lambda m, x: m(x, training=True))
    assert [layout.output_at_positions for layout in chosen] == [True]
    full_logits, full_gradients = _logits_and_gradients(model, inputs, _full_logits)
    np.testing.assert_allclose(logits, full_logits, atol=1e-5)
    for variable, got, want in zip(model.trainable_variables, gradients, full_gradients,
                                   strict=True):
        # Pooler and head gradients are dense; the embeddings' may come as slices.
        np.testing.assert_allclose(tf.convert_to_tensor(got), tf.convert_to_tensor(want),
                                   atol=1e-5, err_msg=variable.path)


def test_multiple_choice_scores_the_full_encoders_cls():
    model = BertMultipleChoice(BertEncoder(without_dropout(TINY_CONFIG)), num_choices=2)
    batch = encoder_batch(batch=4, pad=(0, 2, 4, 1))
    # [4, S] -> [2, 2, S]: two questions of two choices each.
    inputs = {name: tf.reshape(value, [2, 2, -1]) for name, value in batch.items()}
    logits = model(inputs, training=False)
    expected = tf.reshape(_full_logits(model, batch), [2, 2])
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    assert keras.ops.shape(logits) == (2, 2)


def test_building_a_classifier_gives_the_spec_without_tracing_the_encoder(monkeypatch):
    """The symbolic build takes the positions call's shapes from the functional graph (a
    trace of the whole encoder cost 0.5 s at this size, 1.3 s for MiniLM, per build)."""
    calls = []
    original = BertEncoder.call

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("output_positions"))
        return original(self, *args, **kwargs)
    monkeypatch.setattr(BertEncoder, "call", counted)
    encoder = BertEncoder(TINY_CONFIG)
    model = BertClassifier(encoder, num_classes=3)
    assert calls == []
    positions = keras.Input(shape=(4,), dtype="int32")
    spec = encoder.compute_output_spec(encoder_batch(), output_positions=positions)
    assert calls == []
    hidden = TINY_CONFIG.hidden_size
    assert tuple(spec["sequence_output"].shape) == (None, 4, hidden)
    assert [tuple(x.shape) for x in spec["encoder_outputs"]] == [(3, 7, hidden), (None, 4, hidden)]
    assert model(encoder_batch()).shape == (3, 3) and len(calls) == 1  # the real call
