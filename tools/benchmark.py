"""Throughput benchmarks, run by hand (never as tests).

  python tools/benchmark.py --what=encoder --bert_config_file=official_configs/bert_config_base.json \
      --batch_size=8 --seq_length=128 --dtype=mixed_bfloat16 --enable_xla

Prints one JSON row per measurement; peers (keras-hub, Hugging Face tokenizers) run in the
same process where installed, so ratios compare like with like on a noisy machine.
"""

import json

from absl import app, flags

from bert_tf.benchmarking.encoder_inference import benchmark_encoder_inference
from bert_tf.configs import BertConfig

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder"], "Which hot path to measure.")
flags.DEFINE_string("bert_config_file", "official_configs/bert_config_base.json",
                    "Model shape (bert_config.json).")
flags.DEFINE_integer("batch_size", 8, "Sequences per step.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_multi_enum("dtype", ["float32"], ["float32", "mixed_bfloat16", "mixed_float16"],
                        "Keras dtype policies to measure (repeat the flag for several).")
flags.DEFINE_multi_enum("xla", ["off"], ["off", "on"], "XLA jit_compile settings to measure.")
flags.DEFINE_integer("repeats", 5, "Timed repeats per measurement; the median is reported.")


def _print_row(row):
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}),
          flush=True)


def _with_ratios(rows, peer="keras_hub"):
    """Adds `vs_peer`: our rate over the peer's, for rows measured in the same setting."""
    peer_rate = {(r["policy"], r["xla"]): r["seq_per_s"] for r in rows
                 if r.get("implementation") == peer and "seq_per_s" in r}
    for row in rows:
        key = (row.get("policy"), row.get("xla"))
        if row.get("implementation") != peer and key in peer_rate:
            row["vs_" + peer] = row["seq_per_s"] / peer_rate[key]
    return rows


def main(argv):
    del argv
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    rows = []
    for dtype in FLAGS.dtype:
        for xla in FLAGS.xla:
            rows += benchmark_encoder_inference(
                config, FLAGS.batch_size, FLAGS.seq_length, policy=dtype,
                jit_compile=xla == "on", repeats=FLAGS.repeats)
    for row in _with_ratios(rows):
        _print_row(row)


if __name__ == "__main__":
    app.run(main)
