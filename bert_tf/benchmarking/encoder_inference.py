"""Encoder inference throughput, ours and keras-hub's `BertBackbone` of the same shape."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.benchmarking.flops import encoder_forward_flops
from bert_tf.benchmarking.timing import median_seconds
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
    import keras_hub  # dev-only peer

    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings, dropout=config.hidden_dropout_prob)
    return lambda batch: backbone({"token_ids": batch["input_word_ids"],
                                   "segment_ids": batch["input_type_ids"],
                                   "padding_mask": batch["input_mask"]},
                                  training=False)["sequence_output"]


IMPLEMENTATIONS = {"bert_tf": _ours, "keras_hub": _keras_hub}


def benchmark_encoder_inference(config, batch_size, seq_length, policy="float32",
                                jit_compile=False, implementations=("bert_tf", "keras_hub"),
                                repeats=5):
    """Times one forward pass per implementation; returns one result row each.

    Rows: implementation, policy, xla, seq/s, tokens/s, GFLOP/s (matmul FLOPs, forward).
    """
    rows = []
    flops = encoder_forward_flops(config, seq_length) * batch_size
    for name in implementations:
        keras.mixed_precision.set_global_policy(policy)
        try:
            inputs = _random_inputs(config, batch_size, seq_length)
            forward = tf.function(IMPLEMENTATIONS[name](config, inputs), jit_compile=jit_compile)
            seconds = median_seconds(lambda: forward(inputs).numpy(), repeats=repeats, warmup=2)
        except ImportError as error:
            rows.append({"implementation": name, "error": f"not installed ({error})"})
            continue
        finally:
            keras.mixed_precision.set_global_policy("float32")
        rows.append({
            "implementation": name, "policy": policy, "xla": jit_compile,
            "batch": batch_size, "seq": seq_length,
            "seq_per_s": batch_size / seconds,
            "tokens_per_s": batch_size * seq_length / seconds,
            "gflop_per_s": flops / seconds / 1e9,
        })
    return rows
