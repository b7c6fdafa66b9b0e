"""Encoder inference throughput, ours and keras-hub's `BertBackbone` of the same shape."""

import numpy as np
import tensorflow as tf

from benchmarks.flops import encoder_forward_flops
from benchmarks.keras_hub_peer import keras_hub_backbone
from benchmarks.timing import interleaved_median_seconds
from bert_tf.dtype_policy import policy_scope
from bert_tf.models.bert_encoder import BertEncoder


def _random_inputs(config, batch_size, seq_length):
    ids = np.random.default_rng(0).integers(1, config.vocab_size, (batch_size, seq_length))
    return {"input_word_ids": tf.constant(ids, tf.int32),
            "input_mask": tf.ones((batch_size, seq_length), tf.int32),
            "input_type_ids": tf.zeros((batch_size, seq_length), tf.int32)}


def _ours(config, inputs):
    encoder = BertEncoder(config)
    return lambda batch: encoder(batch, training=False)["sequence_output"]


def _keras_hub(config, inputs):
    backbone = keras_hub_backbone(config)
    return lambda batch: backbone({"token_ids": batch["input_word_ids"],
                                   "segment_ids": batch["input_type_ids"],
                                   "padding_mask": batch["input_mask"]},
                                  training=False)["sequence_output"]


def _blocking_call(forward, inputs):
    """A runner for the timer: one forward pass, waited for, returning nothing."""
    def run():
        forward(inputs).numpy()
    return run


IMPLEMENTATIONS = {"bert_tf": _ours, "keras_hub": _keras_hub}


def benchmark_encoder_inference(config, batch_size, seq_length, policy="float32",
                                jit_compile=False, implementations=("bert_tf", "keras_hub"),
                                repeats=5):
    """Times one forward pass per implementation; returns one result row each.

    Rows: implementation, policy, xla, seq/s, tokens/s, GFLOP/s (matmul FLOPs, forward).
    """
    flops = encoder_forward_flops(config, seq_length) * batch_size
    runners, rows = {}, []
    for name in implementations:
        with policy_scope(policy):
            try:
                inputs = _random_inputs(config, batch_size, seq_length)
                forward = tf.function(IMPLEMENTATIONS[name](config, inputs),
                                      jit_compile=jit_compile)
            except ImportError as error:
                rows.append({"implementation": name, "error": f"not installed ({error})"})
                continue
        runners[name] = _blocking_call(forward, inputs)
    seconds = interleaved_median_seconds(runners, repeats=repeats, warmup=2)
    for name, median in seconds.items():
        rows.append({
            "implementation": name, "policy": policy, "xla": jit_compile,
            "batch": batch_size, "seq": seq_length,
            "seq_per_s": batch_size / median,
            "tokens_per_s": batch_size * seq_length / median,
            "gflop_per_s": flops / median / 1e9,
        })
    return rows
