"""Shared pieces of the training tests: the tiny config without dropout, synthetic batches."""

import pytest
import tensorflow as tf

from tests.fixtures import TINY_CONFIG, without_dropout

VOCAB_SIZE, SEQ, PREDICTIONS = TINY_CONFIG.vocab_size, 12, 3


@pytest.fixture(scope="session")  # a frozen BertConfig: safe to share
def dropout_free_config(tiny_config):
    """The suite's tiny config without dropout: runs compared step for step need it."""
    return without_dropout(tiny_config)


def synthetic_examples(count, seed=0):
    """A dict of `count` examples with the pretraining batch structure (API.md)."""
    g = tf.random.Generator.from_seed(seed)
    lengths = g.uniform([count], SEQ // 2, SEQ + 1, tf.int32)
    mask = tf.sequence_mask(lengths, SEQ, tf.int32)
    weights = tf.sequence_mask(g.uniform([count], 1, PREDICTIONS + 1, tf.int32), PREDICTIONS,
                               tf.float32)
    return {
        "input_word_ids": g.uniform([count, SEQ], 1, VOCAB_SIZE, tf.int32) * mask,
        "input_mask": mask,
        "input_type_ids": tf.cast(tf.range(SEQ)[None] >= lengths[:, None] // 2, tf.int32) * mask,
        "masked_lm_positions": g.uniform([count, PREDICTIONS], 1, SEQ // 2, tf.int32),
        "masked_lm_ids": g.uniform([count, PREDICTIONS], 1, VOCAB_SIZE, tf.int32),
        "masked_lm_weights": weights,
        "next_sentence_labels": g.uniform([count], 0, 2, tf.int32),
    }


def dataset_fn(global_batch, count=64, seed=0):
    """`fn(input_context, skip_batches)` over a fixed, repeating sequence of examples."""
    examples = synthetic_examples(count, seed)

    def fn(context, skip_batches=0):
        size = context.get_per_replica_batch_size(global_batch)
        dataset = tf.data.Dataset.from_tensor_slices(examples).repeat().batch(size,
                                                                              drop_remainder=True)
        return dataset.skip(skip_batches)

    return fn
