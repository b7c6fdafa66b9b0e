"""Throughput of the pretraining train step, for benchmarks/benchmark.py (`--what=pretrain_step`).

Times the compiled loop of `train_loop.Trainer` on one in-memory batch repeated (the input
pipeline is benchmarked separately), so the figures are the model + optimizer cost.
"""

import tensorflow as tf

from bert_tf.dtype_policy import policy_scope
from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining_loss import pretraining_loss_fn
from bert_tf.training.train_loop import Trainer


def synthetic_batch(config, batch_size, seq_length, max_predictions, seed=0, lengths=None):
    """A pretraining batch with `max_predictions` real predictions per row.

    Rows are full, or `lengths[i]` real tokens long (then padded), cycling through `lengths`.
    """
    g = tf.random.Generator.from_seed(seed)
    shape, predictions = [batch_size, seq_length], [batch_size, max_predictions]
    mask = tf.ones(shape, tf.int32)
    if lengths is not None:
        row_lengths = tf.constant([lengths[i % len(lengths)] for i in range(batch_size)])
        mask = tf.sequence_mask(row_lengths, seq_length, tf.int32)
    return {
        "input_word_ids": g.uniform(shape, 1, config.vocab_size, tf.int32) * mask,
        "input_mask": mask,
        "input_type_ids": tf.cast(tf.range(seq_length) >= seq_length // 2, tf.int32)[None]
        * tf.ones(shape, tf.int32),
        "masked_lm_positions": tf.cast(
            g.uniform(predictions) * tf.cast(tf.reduce_sum(mask, 1, keepdims=True) - 1, tf.float32),
            tf.int32,
        )
        + 1,
        "masked_lm_ids": g.uniform(predictions, 1, config.vocab_size, tf.int32),
        "masked_lm_weights": tf.ones(predictions, tf.float32),
        "next_sentence_labels": g.uniform([batch_size], 0, 2, tf.int32),
    }


def pretrain_step_runner(config, batch, num_steps, dtype="float32", jit_compile=False,
                         steps_per_loop=1, distribution_strategy="one_device",
                         optimizer="adamw", packed_training=False):
    """Builds our pretrainer and `Trainer`; returns `run()`, which trains `num_steps` steps.

    Args:
      config: a `BertConfig`.
      batch: a global batch (`synthetic_batch`), fed again at every step.
      num_steps: steps per `run()`, a multiple of `steps_per_loop`.
      dtype: `float32`, `mixed_bfloat16` or `mixed_float16` (the model's dtype policy).
      jit_compile: XLA-compile the replica step.
      steps_per_loop: steps per compiled loop call.
      packed_training: compute the real tokens only (`BertEncoder.packed_training`).

    The first `run()` traces and compiles; time the later ones.
    """
    if num_steps % steps_per_loop:
        raise ValueError(f"num_steps={num_steps} is not a multiple of "
                         f"steps_per_loop={steps_per_loop}.")
    with policy_scope(dtype):
        strategy = get_strategy(distribution_strategy)
        with strategy.scope():
            model = build_pretrainer(config, packed_training=packed_training)
            opt = create_optimizer(optimizer, 1e-4, 10**6, 10, dtype=dtype)
    batch_size = batch["input_word_ids"].shape[0]
    trainer = Trainer(strategy, model, pretraining_loss_fn(batch_size), opt,
                      jit_compile=jit_compile)
    iterator = iter(strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensors(batch).repeat().prefetch(2)))
    count = tf.constant(steps_per_loop, tf.int32)

    def run():
        for _ in range(num_steps // steps_per_loop):
            loss = trainer.loop_fn(iterator, count)[0]
        float(loss)  # waits for the last call

    return run
