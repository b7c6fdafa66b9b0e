"""BertMultipleChoice: each choice scored on its own; the shared harness."""

import numpy as np
import tensorflow as tf

from bert_tf.models import BertEncoder, BertMultipleChoice
from tests.fixtures import TINY_CONFIG
from tests.harness import run_harness
from tests.models.conftest import encoder_batch


def _choices(batch):
    return {name: tf.stack([value, tf.reverse(value, [0])], axis=1)
            for name, value in batch.items()}


def test_harness(tmp_path):
    run_harness(lambda: BertMultipleChoice(BertEncoder(TINY_CONFIG), num_choices=2),
                _choices(encoder_batch()), (3, 2), tmp_path, float32_outputs=True)


def test_multiple_choice_scores_each_choice_independently():
    model = BertMultipleChoice(BertEncoder(TINY_CONFIG), num_choices=2)
    batch = encoder_batch()
    logits = model(_choices(batch)).numpy()
    swapped = model({name: tf.reverse(value, [1]) for name, value in _choices(batch).items()})
    np.testing.assert_allclose(logits[:, ::-1], swapped, atol=1e-5)
