"""BertClassifier: the harness for classifier and regressor, and a fit that learns."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import BertClassifier, BertEncoder
from tests.fixtures import TINY_CONFIG
from tests.harness import run_harness
from tests.models.conftest import encoder_batch


@pytest.mark.parametrize("num_classes", [4, 1])  # a classifier and a regressor (STS-B)
def test_harness(num_classes, tmp_path):
    run_harness(lambda: BertClassifier(BertEncoder(TINY_CONFIG), num_classes=num_classes),
                encoder_batch(), (3, num_classes), tmp_path, float32_outputs=True)


def test_fit_reduces_the_loss():
    # Label 1 iff token 7 occurs in the sentence: learnable from the pooled output.
    rng = np.random.default_rng(0)
    ids = rng.integers(8, TINY_CONFIG.vocab_size, size=(64, 8)).astype(np.int32)
    labels = rng.integers(0, 2, size=64).astype(np.int32)
    ids[labels == 1, rng.integers(1, 8)] = 7
    features = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
                "input_type_ids": np.zeros_like(ids)}
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)
    model = BertClassifier(BertEncoder(TINY_CONFIG), num_classes=2)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    history = model.fit(dataset, epochs=15, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
