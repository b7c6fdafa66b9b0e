"""MaskedLMHead: the shared harness (the tied table comes from outside the config)."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.layers.masked_lm_head import MaskedLMHead
from tests.harness import run_harness

VOCAB, HIDDEN = 19, 8


def _inputs():
    rng = np.random.default_rng(0)
    sequence = tf.constant(rng.normal(size=(3, 6, HIDDEN)), tf.float32)
    positions = tf.constant([[1, 2], [0, 5], [4, 4]], tf.int32)
    return sequence, positions


def _word_embeddings():
    words = keras.layers.Embedding(VOCAB, HIDDEN)
    words.build((None,))
    return words


def test_harness(tmp_path):
    # The head's config leaves out the shared word-embedding layer, so it is given back on
    # from_config, and a `.keras` file holds the head only inside BertPretrainer (tested there).
    words = _word_embeddings()
    run_harness(lambda: MaskedLMHead(words, hidden_act="relu"), _inputs(), (3, 2, VOCAB),
                tmp_path, float32_outputs=True, unserialized={"embedding_layer": words},
                saving=False)
