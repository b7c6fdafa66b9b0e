import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.dtype_policy import policy_scope
from bert_tf.models import BertEncoder
from tests.fixtures import TINY_CONFIG
from tests.harness import run_harness
from tests.models.conftest import encoder_batch


def test_harness(tmp_path):
    hidden = (3, 7, TINY_CONFIG.hidden_size)
    expected = {"sequence_output": hidden, "pooled_output": (3, TINY_CONFIG.hidden_size),
                "encoder_outputs": [hidden] * TINY_CONFIG.num_hidden_layers}
    run_harness(lambda: BertEncoder(TINY_CONFIG), encoder_batch(), expected, tmp_path)


def test_output_names_and_shapes():
    outputs = BertEncoder(TINY_CONFIG)(encoder_batch())
    assert outputs["sequence_output"].shape == (3, 7, 12)
    assert outputs["pooled_output"].shape == (3, 12)
    assert len(outputs["encoder_outputs"]) == TINY_CONFIG.num_hidden_layers
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])


def test_pooled_output_is_tanh_dense_of_cls():
    encoder = BertEncoder(TINY_CONFIG)
    outputs = encoder(encoder_batch())
    kernel, bias = (w.numpy() for w in encoder.pooler.weights)
    expected = np.tanh(outputs["sequence_output"].numpy()[:, 0] @ kernel + bias)
    np.testing.assert_allclose(outputs["pooled_output"], expected, atol=1e-6)


def test_padding_does_not_change_real_positions():
    encoder = BertEncoder(TINY_CONFIG)
    batch = encoder_batch(batch=1, seq=5, pad=(0,))
    padded = {name: tf.pad(value, [[0, 0], [0, 6]]) for name, value in batch.items()}
    short = encoder(batch)["sequence_output"].numpy()
    long = encoder(padded)["sequence_output"].numpy()
    np.testing.assert_allclose(long[:, :5], short, atol=1e-5)


def test_dropout_only_in_training():
    encoder = BertEncoder(TINY_CONFIG)
    batch = encoder_batch()
    inference = [encoder(batch, training=False)["sequence_output"].numpy() for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])
    training = [encoder(batch, training=True)["sequence_output"].numpy() for _ in range(2)]
    assert np.max(np.abs(training[0] - training[1])) > 1e-3
    assert np.max(np.abs(training[0] - inference[0])) > 1e-3


def test_causal_attention_ignores_future_tokens():
    encoder = BertEncoder(TINY_CONFIG, causal_attention=True)
    batch = encoder_batch(batch=1, pad=(0,))
    changed = dict(batch, input_word_ids=tf.concat(
        [batch["input_word_ids"][:, :4], tf.fill([1, 3], 9)], axis=1))
    np.testing.assert_allclose(encoder(batch)["sequence_output"][:, :4],
                               encoder(changed)["sequence_output"][:, :4], atol=1e-5)


def test_xla_matches_eager():
    encoder = BertEncoder(TINY_CONFIG)
    batch = encoder_batch()
    compiled = tf.function(lambda inputs: encoder(inputs)["sequence_output"], jit_compile=True)
    np.testing.assert_allclose(compiled(batch), encoder(batch)["sequence_output"], atol=1e-5)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_shapes_dtypes_and_values(policy):
    float32_encoder = BertEncoder(TINY_CONFIG)
    batch = encoder_batch()
    expected = float32_encoder(batch)["sequence_output"].numpy()
    with policy_scope(policy):
        encoder = BertEncoder(TINY_CONFIG)
    encoder.set_weights(float32_encoder.get_weights())
    assert all(w.dtype == "float32" for w in encoder.weights)  # variables stay float32
    outputs = encoder(batch)
    compute = tf.as_dtype(policy.split("_")[1])
    assert outputs["sequence_output"].dtype == compute
    assert outputs["pooled_output"].shape == (3, 12)
    # LayerNorm keeps values O(1); bf16 has 8 mantissa bits, float16 has 11.
    tolerance = 0.1 if compute == tf.bfloat16 else 0.02
    np.testing.assert_allclose(tf.cast(outputs["sequence_output"], tf.float32), expected,
                               atol=tolerance)


def test_keras_file_round_trip(tmp_path):
    encoder = BertEncoder(TINY_CONFIG, causal_attention=True)
    batch = encoder_batch()
    path = str(tmp_path / "encoder.keras")
    encoder.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, BertEncoder) and loaded.causal_attention
    assert loaded.config == TINY_CONFIG
    np.testing.assert_allclose(loaded(batch)["pooled_output"], encoder(batch)["pooled_output"],
                               atol=1e-6)


def test_missing_input_key_is_named():
    batch = encoder_batch()
    del batch["input_type_ids"]
    with pytest.raises(ValueError, match="input_type_ids"):
        BertEncoder(TINY_CONFIG)(batch)


def test_float_ids_are_refused():
    batch = dict(encoder_batch())
    batch["input_word_ids"] = tf.cast(batch["input_word_ids"], tf.float32)
    with pytest.raises(TypeError, match="input_word_ids.*integer"):
        BertEncoder(TINY_CONFIG)(batch)


def test_int64_ids_are_accepted():
    batch = encoder_batch()
    as_int64 = {name: tf.cast(value, tf.int64) for name, value in batch.items()}
    encoder = BertEncoder(TINY_CONFIG)
    np.testing.assert_allclose(encoder(as_int64)["pooled_output"], encoder(batch)["pooled_output"])


def test_sequence_longer_than_positions_is_refused():
    longest = TINY_CONFIG.max_position_embeddings
    batch = encoder_batch(seq=longest + 1)
    with pytest.raises(ValueError,
                       match=f"sequence length {longest + 1}.*max_position_embeddings={longest}"):
        BertEncoder(TINY_CONFIG)(batch)
