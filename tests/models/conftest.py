"""Batches for the model tests, on the suite's one tiny config (tests/fixtures.py)."""

import numpy as np
import tensorflow as tf

from bert_tf.models import bert_encoder
from bert_tf.models.encoder_layout import choose_layout
from tests.fixtures import TINY_CONFIG


def encoder_batch(batch=3, seq=7, pad=(0, 2, 4), seed=0):
    """A batch of ids where sequence i has `pad[i]` trailing padding positions."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, TINY_CONFIG.vocab_size, size=(batch, seq)).astype(np.int32)
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


def record_layouts(monkeypatch):
    """The list that each `BertEncoder` call's chosen layout is appended to from now on."""
    chosen = []

    def recorded(*args, **kwargs):
        chosen.append(choose_layout(*args, **kwargs))
        return chosen[-1]
    monkeypatch.setattr(bert_encoder, "choose_layout", recorded)
    return chosen
