import numpy as np
import pytest
import tensorflow as tf

from bert_tf.configs import BertConfig

# Tiny odd sizes so that shape mix-ups cannot cancel out.
TINY = BertConfig(vocab_size=53, hidden_size=12, num_hidden_layers=2, num_attention_heads=3,
                  intermediate_size=20, max_position_embeddings=16, type_vocab_size=2)


@pytest.fixture
def tiny_config():
    return TINY


def encoder_batch(batch=3, seq=7, pad=(0, 2, 4), seed=0):
    """A batch of ids where sequence i has `pad[i]` trailing padding positions."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, TINY.vocab_size, size=(batch, seq)).astype(np.int32)
    mask = np.ones((batch, seq), np.int32)
    for row, count in enumerate(pad[:batch]):
        if count:
            ids[row, -count:] = 0
            mask[row, -count:] = 0
    types = np.zeros((batch, seq), np.int32)
    types[:, seq // 2:] = 1
    types *= mask
    return {"input_word_ids": tf.constant(ids), "input_mask": tf.constant(mask),
            "input_type_ids": tf.constant(types)}
