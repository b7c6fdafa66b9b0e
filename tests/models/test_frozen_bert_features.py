"""FrozenBertFeatures: the chosen layers' outputs, concatenated or summed, with no training."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.frozen_bert_features import FrozenBertFeatures

CONFIG = BertConfig(vocab_size=30, hidden_size=6, num_hidden_layers=4, num_attention_heads=2,
                    intermediate_size=12)


def _inputs():
    ids = tf.constant([[2, 7, 9, 3, 0], [2, 5, 3, 0, 0]])
    return {"input_word_ids": ids, "input_mask": tf.sign(ids), "input_type_ids": tf.zeros_like(ids)}


def test_concat_and_sum_match_encoder_layers():
    encoder = BertEncoder(CONFIG)
    hidden = [h.numpy() for h in encoder(_inputs(), training=False)["encoder_outputs"]]
    concat = FrozenBertFeatures(encoder)(_inputs()).numpy()
    assert concat.shape == (2, 5, 24)
    np.testing.assert_allclose(concat, np.concatenate(hidden[::-1], axis=-1), rtol=1e-5, atol=1e-6)
    summed = FrozenBertFeatures(encoder, layers=[0, -1], combine="sum")(_inputs()).numpy()
    np.testing.assert_allclose(summed, hidden[0] + hidden[3], rtol=1e-5, atol=1e-6)


def test_encoder_is_frozen_inside_a_trained_model():
    encoder = BertEncoder(CONFIG)
    before = [w.numpy().copy() for w in encoder.weights]
    inputs = {name: keras.Input((5,), dtype="int32", name=name) for name in _inputs()}
    features = FrozenBertFeatures(encoder, layers=[-1, -2])(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3)(features))
    assert len(model.trainable_weights) == 2  # only the Dense kernel and bias
    model.compile(optimizer=keras.optimizers.Adam(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(_inputs(), np.zeros((2, 5)), epochs=2, verbose=0)
    for old, new in zip(before, encoder.weights):
        np.testing.assert_array_equal(old, new.numpy())


def test_config_round_trip_and_bad_arguments():
    layer = FrozenBertFeatures(BertEncoder(CONFIG), layers=[-1, -3], combine="sum")
    clone = FrozenBertFeatures.from_config(layer.get_config())
    assert (clone.layers, clone.combine) == ((-1, -3), "sum")
    assert clone.encoder.config.num_hidden_layers == 4
    with pytest.raises(ValueError, match=r"\[-4, 3\].*received \[4\]"):
        FrozenBertFeatures(BertEncoder(CONFIG), layers=[4])
    with pytest.raises(ValueError, match="combine"):
        FrozenBertFeatures(BertEncoder(CONFIG), combine="mean")
