"""BertEmbeddings: word + segment + position, normalized; and the shared harness."""

import numpy as np
import tensorflow as tf

from bert_tf.layers.embeddings import BertEmbeddings
from tests.harness import run_harness

VOCAB, HIDDEN, POSITIONS = 23, 10, 9


def _inputs():
    ids = tf.constant([[2, 7, 9, 3, 0, 0], [2, 5, 22, 11, 4, 3]], tf.int32)
    types = tf.constant([[0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 1, 1]], tf.int32)
    return ids, types


def _layer(**kwargs):
    return BertEmbeddings(vocab_size=VOCAB, hidden_size=HIDDEN, max_position_embeddings=POSITIONS,
                          type_vocab_size=3, layer_norm_eps=1e-6, **kwargs)


def test_sum_of_three_tables_then_layer_norm():
    ids, types = _inputs()
    layer = _layer(dropout_rate=0.0)
    outputs = layer(ids, types).numpy()
    words = layer.word_embeddings.embeddings.numpy()
    segments = layer.token_type_embeddings.embeddings.numpy()
    positions = layer.position_embeddings.numpy()
    summed = words[ids.numpy()] + segments[types.numpy()] + positions[None, :ids.shape[1]]
    gamma, beta = (w.numpy() for w in layer.layer_norm.weights)
    mean, var = summed.mean(-1, keepdims=True), summed.var(-1, keepdims=True)
    expected = (summed - mean) / np.sqrt(var + 1e-6) * gamma + beta
    np.testing.assert_allclose(outputs, expected, atol=1e-5)


def test_harness(tmp_path):
    run_harness(lambda: _layer(dropout_rate=0.2), _inputs(), (2, 6, HIDDEN), tmp_path)
