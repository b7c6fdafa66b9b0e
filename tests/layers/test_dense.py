"""Dense: keras's Dense values, without tensordot's shape ops in inference graphs."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.dense import Dense
from tests.harness import run_harness


def _built_pair(activation="gelu"):
    ours = Dense(5, activation=activation)
    reference = keras.layers.Dense(5, activation=activation)
    for layer in (ours, reference):
        layer.build((None, None, 8))
    reference.set_weights([np.random.default_rng(1).normal(size=w.shape).astype(np.float32)
                           for w in reference.get_weights()])
    ours.set_weights(reference.get_weights())
    return ours, reference


def test_harness(tmp_path):
    inputs = tf.constant(np.random.default_rng(0).normal(size=(3, 4, 8)), tf.float32)
    run_harness(lambda: Dense(6, activation="tanh"), (inputs,), (3, 4, 6), tmp_path)


@pytest.mark.parametrize("shape", [(3, 4, 8), (2, 3, 4, 8), (6, 8)])
@pytest.mark.parametrize("training", [False, True])
def test_values_equal_keras_dense(shape, training):
    ours, reference = _built_pair()
    inputs = tf.constant(np.random.default_rng(2).normal(size=shape), tf.float32)
    np.testing.assert_allclose(ours(inputs, training=training), reference(inputs),
                               rtol=1e-6, atol=1e-6)


def test_gradients_equal_keras_dense():
    ours, reference = _built_pair()
    inputs = tf.constant(np.random.default_rng(3).normal(size=(3, 4, 8)), tf.float32)
    grads = []
    for layer in (ours, reference):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(inputs, training=True)))
        grads.append(tape.gradient(loss, layer.trainable_variables))
    for ours_grad, reference_grad in zip(*grads):
        np.testing.assert_allclose(ours_grad, reference_grad, rtol=1e-5, atol=1e-5)


def _op_types(layer, training):
    call = tf.function(lambda x: layer(x, training=training))
    graph = call.get_concrete_function(tf.TensorSpec([None, None, 8], tf.float32)).graph
    return {op.type for op in graph.get_operations()}


def test_inference_on_a_sequence_batch_is_one_matmul_without_shape_arithmetic():
    ours, reference = _built_pair(activation=None)
    assert "Prod" in _op_types(reference, training=False)  # tensordot's, what this layer drops
    inference = _op_types(ours, training=False)
    assert "BatchMatMulV2" in inference
    assert not inference & {"Prod", "Shape", "GatherV2", "ConcatV2", "Reshape"}
