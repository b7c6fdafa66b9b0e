import numpy as np
import tensorflow as tf

from bert_tf.layers.attention import MultiHeadSelfAttention
from tests.harness import run_harness


def numpy_attention(layer, x, mask, causal=False):
    """Scaled dot-product attention written out in numpy from the layer's weights."""
    def dense(dense_layer, values):
        kernel, bias = (w.numpy() for w in dense_layer.weights)
        return values @ kernel + bias

    batch, seq, hidden = x.shape
    heads, size = layer.num_heads, layer.head_size
    split = lambda t: t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)
    q, k, v = (split(dense(d, x)) for d in (layer.query, layer.key, layer.value))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size)
    allowed = mask[:, None, None, :].astype(bool)
    if causal:
        allowed = allowed & np.tril(np.ones((seq, seq), bool))[None, None]
    scores = np.where(allowed, scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    return dense(layer.output_dense, context)


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 12)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    return x, mask


def test_matches_numpy_reference_with_padding_mask():
    x, mask = _inputs()
    layer = MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.0)
    np.testing.assert_allclose(layer(x, mask).numpy(), numpy_attention(layer, x, mask), atol=1e-5)


def test_causal_matches_numpy_reference():
    x, mask = _inputs()
    layer = MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.0, causal=True)
    np.testing.assert_allclose(layer(x, mask).numpy(), numpy_attention(layer, x, mask, True),
                               atol=1e-5)


def test_causal_position_ignores_the_future():
    x, mask = _inputs()
    layer = MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.0, causal=True)
    changed = x.copy()
    changed[:, 3:] += 10.0
    np.testing.assert_allclose(layer(x, mask).numpy()[:, :3], layer(changed, mask).numpy()[:, :3],
                               atol=1e-5)


def test_masked_keys_do_not_matter():
    x, mask = _inputs()
    layer = MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.0)
    changed = x.copy()
    changed[0, 3:] = 123.0  # padded positions of the first sequence
    np.testing.assert_allclose(layer(x, mask).numpy()[0, :3], layer(changed, mask).numpy()[0, :3],
                               atol=1e-5)


def test_config_round_trip():
    layer = MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.2, causal=True)
    clone = MultiHeadSelfAttention.from_config(layer.get_config())
    assert (clone.num_heads, clone.head_size, clone.dropout_rate, clone.causal) == (3, 4, 0.2, True)


def test_harness(tmp_path):
    x, mask = _inputs()
    build = lambda: MultiHeadSelfAttention(num_heads=3, head_size=4, dropout_rate=0.2)
    run_harness(build, (tf.constant(x), tf.constant(mask)), (2, 5, 12), tmp_path)
