"""TransformerBlock: the shared harness."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.layers.transformer_block import TransformerBlock
from tests.harness import run_harness

HIDDEN, SEQ = 12, 7


def _inputs():
    rng = np.random.default_rng(0)
    hidden = tf.constant(rng.normal(size=(3, SEQ, HIDDEN)), tf.float32)
    mask = tf.constant([[1] * SEQ, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4], tf.int32)
    return hidden, mask


def test_harness(tmp_path):
    build = lambda: TransformerBlock(hidden_size=HIDDEN, num_heads=2, intermediate_size=20,
                                     hidden_act="gelu_new", causal=True)
    run_harness(build, _inputs(), (3, SEQ, HIDDEN), tmp_path)


def test_symbolic_call_with_output_positions_has_their_shape():
    block = TransformerBlock(hidden_size=HIDDEN, num_heads=2, intermediate_size=20)
    hidden = keras.Input(shape=(SEQ, HIDDEN))
    mask = keras.Input(shape=(SEQ,), dtype="int32")
    positions = keras.Input(shape=(4,), dtype="int32")
    assert tuple(block(hidden, mask, output_positions=positions).shape) == (None, 4, HIDDEN)
    assert tuple(block.attention(hidden, mask, output_positions=positions).shape) == (
        None, 4, HIDDEN)
    assert tuple(block(hidden, mask).shape) == (None, SEQ, HIDDEN)
