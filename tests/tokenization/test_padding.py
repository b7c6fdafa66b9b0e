"""BertPreprocessor padding "longest" and "buckets": the width rule, and outputs at real positions
equal to "fixed" (packed ids, encoder outputs, classifier logits)."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.models import BertClassifier, BertEncoder
from bert_tf.tokenization.bert_preprocessor import (
    BertPreprocessor,
    default_bucket_lengths,
    padded_width,
)
from tests.tokenization.reference_data import row_bytes

KEYS = ("input_word_ids", "input_mask", "input_type_ids")
SEQ_LENGTH = 64


@pytest.fixture(scope="module")
def lines(reference_rows):
    """Real lines of every length, long ones included (cut at SEQ_LENGTH)."""
    return [row_bytes(r) for r in reference_rows[:200]]


def _pack(vocab, padding, texts, **kwargs):
    preprocessor = BertPreprocessor(vocab, seq_length=SEQ_LENGTH, padding=padding, **kwargs)
    return {k: v.numpy() for k, v in preprocessor(texts).items()}


@pytest.mark.parametrize("padding", ["longest", "buckets"])
@pytest.mark.parametrize("pair", [False, True])
def test_packed_inputs_are_fixed_inputs_cut_at_the_width(minilm_vocab, lines, padding, pair):
    rng = np.random.default_rng(0)
    for size in (1, 3, 16, 32):
        chosen = rng.choice(len(lines), size)
        texts = tf.constant([lines[i] for i in chosen])
        if pair:
            texts = (texts, tf.constant([lines[i] for i in rng.choice(len(lines), size)]))
        fixed = _pack(minilm_vocab, "fixed", texts)
        packed = _pack(minilm_vocab, padding, texts)
        width = packed["input_mask"].shape[1]
        longest = fixed["input_mask"].sum(1).max()
        assert longest <= width <= SEQ_LENGTH
        for key in KEYS:
            np.testing.assert_array_equal(packed[key], fixed[key][:, :width])
            assert not fixed[key][:, width:].any()  # nothing real was cut off


def test_width_rule():
    lengths = [tf.constant(v) for v in ([3], [8], [9], [2, 17], [64], [100])]
    longest = [np.max(x.numpy()) for x in lengths]
    rounded = [int(padded_width(x, 128, "longest")) for x in lengths]
    assert rounded == [8, 8, 16, 24, 64, 104]
    buckets = (16, 32, 64, 128)
    bucketed = [int(padded_width(x, 128, "buckets", buckets)) for x in lengths]
    assert bucketed == [16, 16, 16, 32, 64, 128]
    for n, r, b in zip(longest, rounded, bucketed):
        assert n <= r < n + 8 and r % 8 == 0
        assert b == min(k for k in buckets if k >= n)
    assert int(padded_width(tf.constant([125]), 128, "longest")) == 128  # capped
    assert padded_width(tf.constant([3]), 128, "fixed") == 128
    assert default_bucket_lengths(128) == (16, 32, 64, 128)
    assert default_bucket_lengths(384) == (16, 32, 64, 128, 256, 384)


def test_bad_padding_arguments_are_clear(minilm_vocab):
    with pytest.raises(ValueError, match="padding must be one of"):
        BertPreprocessor(minilm_vocab, padding="dynamic")
    with pytest.raises(ValueError, match="end at seq_length=128"):
        BertPreprocessor(minilm_vocab, padding="buckets", bucket_lengths=(32, 64))
    with pytest.raises(ValueError, match="must increase"):
        BertPreprocessor(minilm_vocab, seq_length=64, padding="buckets",
                         bucket_lengths=(32, 16, 64))


def test_config_round_trip_keeps_padding(minilm_vocab):
    original = BertPreprocessor(minilm_vocab, seq_length=64, padding="buckets",
                                bucket_lengths=(24, 64))
    copy = BertPreprocessor.from_config(original.get_config())
    assert (copy.padding, copy.bucket_lengths) == ("buckets", (24, 64))
    assert copy(tf.constant(["a short one"]))["input_mask"].shape == (1, 24)


def test_shape_is_static_only_when_fixed(minilm_vocab):
    spec = tf.TensorSpec([None], tf.string)
    for padding, shape in (("fixed", [None, SEQ_LENGTH]), ("longest", [None, None])):
        preprocessor = BertPreprocessor(minilm_vocab, seq_length=SEQ_LENGTH, padding=padding)
        traced = tf.function(lambda s: preprocessor(s)["input_word_ids"])  # noqa: B023
        assert traced.get_concrete_function(spec).output_shapes.as_list() == shape


@pytest.fixture(scope="module")
def tiny_encoder():
    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    return BertEncoder(config)


@pytest.mark.parametrize("padding", ["longest", "buckets"])
def test_encoder_and_classifier_outputs_at_real_positions_equal_fixed(
        minilm_vocab, lines, tiny_encoder, padding):
    every = _pack(minilm_vocab, "fixed", tf.constant(lines))["input_mask"].sum(1)
    texts = tf.constant([line for line, n in zip(lines, every) if n < 30][:32])
    fixed = _pack(minilm_vocab, "fixed", texts)
    packed = _pack(minilm_vocab, padding, texts)
    width = packed["input_mask"].shape[1]
    assert width < SEQ_LENGTH  # the test means something only if padding was saved
    want = tiny_encoder(fixed, training=False)
    got = tiny_encoder(packed, training=False)
    real = fixed["input_mask"][:, :width].astype(bool)
    np.testing.assert_allclose(got["sequence_output"].numpy()[real],
                               want["sequence_output"].numpy()[:, :width][real], atol=1e-5)
    np.testing.assert_allclose(got["pooled_output"], want["pooled_output"], atol=1e-5)
    classifier = BertClassifier(tiny_encoder, 3)
    np.testing.assert_allclose(classifier(packed, training=False),
                               classifier(fixed, training=False), atol=1e-5)
