"""The table of `bert_tf.models.encoder_layout`, row by row: each call picks its layout, and
every layout gives the padded forward's outputs at real positions (rows of several sequences:
each sequence's outputs alone in its own row)."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertEncoder
from bert_tf.models.encoder_layout import (
    BATCH_OF_ONE,
    PACKED,
    PADDED,
    POSITION_IDS,
    ROWS,
    EncoderLayout,
    choose_layout,
)
from tests.fixtures import TINY_CONFIG, without_dropout
from tests.models.conftest import encoder_batch, record_layouts

REFUSED = "rows of several sequences .* and packed_training .* do not combine"
# Rows of several sequences: lengths (3, 2, 2) and (2, 3, 2), one padding slot each.
ROW_LENGTHS = ((3, 2, 2), (2, 3, 2))
ROW_WIDTH = 8


@dataclasses.dataclass(frozen=True)
class Case:
    """One row of the table: encoder settings, the call, and the layout it must pick."""

    layout: EncoderLayout
    settings: dict = dataclasses.field(default_factory=dict)
    training: bool = False
    rows: bool = False
    batch: int = 3
    output_positions: bool | str = False  # "none": `[B, 0]`, the last block at [CLS] only
    pooled_positions: bool = False
    single_request: bool = False


CASES = {
    "padded-inference": Case(EncoderLayout(PADDED), {"packed_inference": False}),
    "padded-training-output_positions": Case(
        EncoderLayout(PADDED, output_at_positions=True), training=True, output_positions=True),
    "padded-inference-pooled_positions": Case(
        EncoderLayout(PADDED, pooled_at_positions=True), {"packed_inference": False},
        pooled_positions=True),
    "padded-single_request-no_effect": Case(
        EncoderLayout(PADDED), {"packed_inference": False}, batch=1, single_request=True),
    "packed-inference": Case(EncoderLayout(PACKED)),
    "packed-inference-both_positions": Case(
        EncoderLayout(PACKED, True, True), output_positions=True, pooled_positions=True),
    "packed-training-output_positions": Case(
        EncoderLayout(PACKED, output_at_positions=True), {"packed_training": True},
        training=True, output_positions=True),
    "packed-inference-cls_only": Case(
        EncoderLayout(PACKED, output_at_positions=True), output_positions="none"),
    "packed-training-cls_only": Case(
        EncoderLayout(PACKED, output_at_positions=True), {"packed_training": True},
        training=True, output_positions="none"),
    "packed-single_request-pooled_positions": Case(
        EncoderLayout(PACKED, pooled_at_positions=True), batch=1, pooled_positions=True,
        single_request=True),
    "packed-single_request-training": Case(
        EncoderLayout(PACKED), {"packed_training": True}, training=True, batch=1,
        single_request=True),
    "rows-training-both_positions": Case(
        EncoderLayout(ROWS, True, True), training=True, rows=True, output_positions=True,
        pooled_positions=True),
    "rows-inference-packed_inference_ignored": Case(
        EncoderLayout(ROWS, pooled_at_positions=True), rows=True, pooled_positions=True),
    "rows-single_request-no_effect": Case(EncoderLayout(ROWS), rows=True, single_request=True),
    "batch_of_one-one_row": Case(EncoderLayout(BATCH_OF_ONE), batch=1, single_request=True),
    "batch_of_one-three_rows": Case(EncoderLayout(BATCH_OF_ONE), single_request=True),
    "batch_of_one-one_row-output_positions": Case(
        EncoderLayout(BATCH_OF_ONE, output_at_positions=True), batch=1, output_positions=True,
        single_request=True),
    "batch_of_one-one_row-cls_only": Case(
        EncoderLayout(BATCH_OF_ONE, output_at_positions=True), batch=1,
        output_positions="none", single_request=True),
    "batch_of_one-three_rows-cls_only": Case(
        EncoderLayout(BATCH_OF_ONE, output_at_positions=True), output_positions="none",
        single_request=True),
}


@pytest.fixture(scope="module")
def reference():
    """The padded encoder every layout is compared to (no dropout: training compares too)."""
    return BertEncoder(without_dropout(TINY_CONFIG), packed_inference=False)


def _encoder(reference, settings):
    encoder = BertEncoder(reference.config, **settings)
    encoder.set_weights(reference.get_weights())
    return encoder


def _rows_inputs():
    """Rows of several sequences and the same sequences one per row (`[5, 3]`, padded)."""
    rng = np.random.default_rng(3)
    ids, mask, positions = (np.zeros((2, ROW_WIDTH), np.int32) for _ in range(3))
    alone = np.zeros((sum(map(len, ROW_LENGTHS)), max(max(ROW_LENGTHS))), np.int32)
    starts, sequence = [], 0
    for row, lengths in enumerate(ROW_LENGTHS):
        start = 0
        for number, length in enumerate(lengths, 1):
            tokens = rng.integers(5, TINY_CONFIG.vocab_size, length)
            ids[row, start:start + length] = tokens
            mask[row, start:start + length] = number
            positions[row, start:start + length] = np.arange(length)
            alone[sequence, :length] = tokens
            starts.append((row, start, length, sequence))
            start, sequence = start + length, sequence + 1
    rows = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": 0 * ids,
            POSITION_IDS: positions}
    single = {"input_word_ids": alone, "input_mask": np.sign(alone),
              "input_type_ids": 0 * alone}
    return ({k: tf.constant(v) for k, v in rows.items()},
            {k: tf.constant(v) for k, v in single.items()}, starts)


def _expected_layers(reference, case):
    """`(inputs, [B, S, H] per layer as the padded forward gives them, real-token mask)`."""
    if not case.rows:
        inputs = encoder_batch(batch=case.batch, pad=(2, 0, 4))
        layers = reference(inputs, training=False)["encoder_outputs"]
        return inputs, [layer.numpy() for layer in layers], inputs["input_mask"].numpy() > 0
    inputs, single, starts = _rows_inputs()
    alone = reference(single, training=False)["encoder_outputs"]
    layers = [np.zeros(inputs["input_mask"].shape + (reference.config.hidden_size,),
                       np.float32) for _ in alone]
    for layer, alone_layer in zip(layers, alone):
        for row, start, length, sequence in starts:
            layer[row, start:start + length] = alone_layer[sequence, :length]
    return inputs, layers, inputs["input_mask"].numpy() > 0


def _positions(case, inputs):
    """The call's `output_positions` and `pooled_positions` (`[B, K]` each, or None)."""
    batch = inputs["input_mask"].shape[0]
    output = None
    if case.output_positions == "none":
        output = tf.zeros([batch, 0], tf.int32)
    elif case.output_positions:
        output = tf.constant([[1, 2], [4, 3], [1, 0]][:batch])
    pooled = None
    if case.pooled_positions:
        pooled = (tf.constant([[0, 3, 5], [0, 2, 5]]) if case.rows
                  else tf.constant([[0, 1], [2, 0], [1, 1]][:batch]))
    return output, pooled


@pytest.mark.parametrize("name", CASES)
def test_each_layout_gives_the_padded_outputs_at_real_positions(reference, name, monkeypatch):
    case = CASES[name]
    encoder = _encoder(reference, case.settings)
    inputs, expected, real = _expected_layers(reference, case)
    output_positions, pooled_positions = _positions(case, inputs)
    chosen = record_layouts(monkeypatch)
    if case.single_request:
        with encoder.serving_batch_of_one():
            outputs = encoder(inputs, training=case.training, output_positions=output_positions,
                              pooled_positions=pooled_positions)
    else:
        outputs = encoder(inputs, training=case.training, output_positions=output_positions,
                          pooled_positions=pooled_positions)

    assert chosen == [case.layout]
    layers = [layer.numpy() for layer in outputs["encoder_outputs"]]
    full_last = expected[-1]
    if case.output_positions:
        # The last block stops at the positions: [B, K, H], the full output's values there.
        at_positions = np.take_along_axis(full_last, output_positions.numpy()[..., None], 1)
        np.testing.assert_allclose(layers.pop(), at_positions, atol=1e-5)
        np.testing.assert_allclose(outputs["sequence_output"], at_positions, atol=1e-5)
        expected = expected[:-1]
    else:
        np.testing.assert_allclose(outputs["sequence_output"][real], full_last[real], atol=1e-5)
    for layer, expected_layer in zip(layers, expected, strict=True):
        assert layer.shape == expected_layer.shape
        np.testing.assert_allclose(layer[real], expected_layer[real], atol=1e-5)
        if case.layout.tokens in (PACKED, BATCH_OF_ONE):  # zero at padding
            assert not np.any(layer[~real])
    # The pooler reads [CLS] (zero where it is padding) or the states at pooled_positions.
    if case.pooled_positions:
        states = np.take_along_axis(full_last, pooled_positions.numpy()[..., None], 1)
    else:
        states = full_last[:, 0] * real[:, :1]
    np.testing.assert_allclose(outputs["pooled_output"], reference.pooler(states), atol=1e-5)


def test_rows_of_several_sequences_refuse_packed_training(reference):
    inputs, _, _ = _rows_inputs()
    with pytest.raises(ValueError, match=REFUSED):
        choose_layout(inputs, training=True, packed_training=True)
    with pytest.raises(ValueError, match=REFUSED):
        _encoder(reference, {"packed_training": True})(inputs, training=True)


def test_the_single_request_setting_is_on_only_within_its_scope(reference):
    """Off by default and after the scope, even when the traced call raised."""
    encoder = _encoder(reference, {})
    assert not encoder.single_sequence_padded
    with pytest.raises(RuntimeError, match="traced"):
        with encoder.serving_batch_of_one():
            assert encoder.single_sequence_padded
            raise RuntimeError("traced")
    assert not encoder.single_sequence_padded
    assert "single_sequence_padded" not in encoder.get_config()
