"""Throughput of the pretraining train step, for tools/benchmark.py (`--what=pretrain`).

Measures the compiled loop of `train_loop.Trainer` on one in-memory batch repeated (the
input pipeline is benchmarked separately), so the figures are the model + optimizer cost.
"""

import statistics
import time

import keras
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining import build_pretrainer, pretraining_loss_fn

# The CPU target shape: 4 layers, H=256, 4 heads, intermediate 1024.
CPU_TARGET_CONFIG = BertConfig(vocab_size=30522, hidden_size=256, num_hidden_layers=4,
                               num_attention_heads=4, intermediate_size=1024)


def synthetic_batch(config, batch_size, seq_length, max_predictions, seed=0):
    """A full-length pretraining batch with `max_predictions` real predictions per row."""
    g = tf.random.Generator.from_seed(seed)
    shape, predictions = [batch_size, seq_length], [batch_size, max_predictions]
    return {
        "input_word_ids": g.uniform(shape, 1, config.vocab_size, tf.int32),
        "input_mask": tf.ones(shape, tf.int32),
        "input_type_ids": tf.cast(tf.range(seq_length) >= seq_length // 2, tf.int32)[None] * tf.ones(shape, tf.int32),
        "masked_lm_positions": g.uniform(predictions, 1, seq_length, tf.int32),
        "masked_lm_ids": g.uniform(predictions, 1, config.vocab_size, tf.int32),
        "masked_lm_weights": tf.ones(predictions, tf.float32),
        "next_sentence_labels": g.uniform([batch_size], 0, 2, tf.int32),
    }


def benchmark_pretrain_step(config=CPU_TARGET_CONFIG, batch_size=32, seq_length=128,
                            max_predictions=20, dtype="float32", jit_compile=False,
                            steps_per_loop=1, num_steps=20, repeats=3,
                            distribution_strategy="one_device", optimizer="adamw"):
    """Median train-step throughput of `Trainer.loop_fn`.

    Args:
      config: a `BertConfig`.
      batch_size, seq_length, max_predictions: the batch shape (global batch).
      dtype: `float32`, `mixed_bfloat16` or `mixed_float16`.
      jit_compile: XLA-compile the replica step.
      steps_per_loop: steps per compiled loop call.
      num_steps: steps per timed repeat (rounded up to whole loop calls).
      repeats: timed repeats; the median is reported.

    Returns:
      dict: `sequences_per_second`, `tokens_per_second`, `seconds_per_step` (medians),
      `compile_seconds` (the first, untimed call) and the settings.
    """
    keras.mixed_precision.set_global_policy(dtype)
    try:
        strategy = get_strategy(distribution_strategy)
        with strategy.scope():
            model = build_pretrainer(config)
            opt = create_optimizer(optimizer, 1e-4, 10**6, 10, dtype=dtype)
        from bert_tf.training.train_loop import Trainer

        trainer = Trainer(strategy, model, pretraining_loss_fn(batch_size), opt,
                          jit_compile=jit_compile)
        batch = synthetic_batch(config, batch_size, seq_length, max_predictions)
        dataset = strategy.distribute_datasets_from_function(
            lambda ctx: tf.data.Dataset.from_tensors(batch).repeat().prefetch(2))
        iterator = iter(dataset)
        calls = max(1, -(-num_steps // steps_per_loop))
        count = tf.constant(steps_per_loop, tf.int32)
        start = time.perf_counter()
        float(trainer.loop_fn(iterator, count)[0])
        compile_seconds = time.perf_counter() - start
        per_step = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                loss = trainer.loop_fn(iterator, count)[0]
            float(loss)  # waits for the last call
            per_step.append((time.perf_counter() - start) / (calls * steps_per_loop))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    seconds = statistics.median(per_step)
    return {"dtype": dtype, "jit_compile": jit_compile, "steps_per_loop": steps_per_loop,
            "batch_size": batch_size, "seq_length": seq_length, "max_predictions": max_predictions,
            "seconds_per_step": seconds, "sequences_per_second": batch_size / seconds,
            "tokens_per_second": batch_size * seq_length / seconds,
            "compile_seconds": compile_seconds}


def benchmark_pretrain_grid(config=CPU_TARGET_CONFIG, dtypes=("float32", "mixed_bfloat16"),
                            jit_compile=(False, True), steps_per_loop=(1, 100), **kwargs):
    """`benchmark_pretrain_step` over dtype x XLA x steps_per_loop; a list of result dicts."""
    return [benchmark_pretrain_step(config, dtype=d, jit_compile=j, steps_per_loop=s, **kwargs)
            for d in dtypes for j in jit_compile for s in steps_per_loop]
