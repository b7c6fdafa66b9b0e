"""BertEmbeddings: word + segment + position, normalized; and the shared harness."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.layers.embeddings import BertEmbeddings
from bert_tf.layers.masked_lm_head import MaskedLMHead
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


def test_word_lookup_reads_rows_not_the_table():
    ids, types = _inputs()
    layer = _layer(dropout_rate=0.0)
    layer(ids, types)  # builds the tables
    reference = keras.layers.Embedding(VOCAB, HIDDEN)
    reference.build((None,))
    reference.embeddings.assign(layer.word_embeddings.embeddings)
    # The same rows and the same sparse gradient as Keras's `Embedding`.
    with tf.GradientTape(persistent=True) as tape:
        rows, expected = layer.word_embeddings(ids), reference(ids)
        loss, reference_loss = tf.reduce_sum(rows ** 2), tf.reduce_sum(expected ** 2)
    np.testing.assert_array_equal(rows.numpy(), expected.numpy())
    gradient = tape.gradient(loss, layer.word_embeddings.embeddings)
    assert isinstance(gradient, tf.IndexedSlices)
    np.testing.assert_allclose(tf.convert_to_tensor(gradient), tf.convert_to_tensor(
        tape.gradient(reference_loss, reference.embeddings)), rtol=1e-6)
    # In a graph, the table is gathered from (rows), never read whole.
    graph = tf.function(lambda x: layer.word_embeddings(x)).get_concrete_function(ids).graph
    types_seen = {op.type for op in graph.get_operations()}
    assert "ResourceGather" in types_seen and "ReadVariableOp" not in types_seen, types_seen
    # A tied masked-LM decoder reads the table whole, so the lookup does too.
    MaskedLMHead(layer.word_embeddings)
    graph = tf.function(lambda x: layer.word_embeddings(x)).get_concrete_function(ids).graph
    assert "ResourceGather" not in {op.type for op in graph.get_operations()}
