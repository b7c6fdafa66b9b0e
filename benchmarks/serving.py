"""Serving on real lines in their arrival order (`benchmarks/benchmark.py --what=serving`).

Requests are not sorted: a batch of real lines in file order is as long as its longest line,
so what a system computes is set by the length tail, not the median. Each system of
`serving_systems` runs in its own worker process (`benchmarks/serving_worker.py`; the PyTorch and
ONNX Runtime ones with the dev-only `.venv-ref` Python, where it exists), on the same number
of threads, with raw strings in and tokenization inside every timing. The workers are timed
in turns, round by round (`timing.interleaved_median_seconds`), so load from other processes
falls on all of them alike. Never a test.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks import CORPUS_DIR, REPO_ROOT
from benchmarks.serving_systems import SYSTEMS, TF_SYSTEMS
from benchmarks.timing import interleaved_median_seconds
from bert_tf.tokenization.bert_preprocessor import PAD_TO_MULTIPLE_OF

HELD_OUT_TEXT = os.path.join(CORPUS_DIR, "heldout.txt.gz")
KERAS_HUB_PEER = "keras_hub"
ORT_PEER = "onnxruntime optimized"


def arrival_order_lines(path=HELD_OUT_TEXT, limit=None):
    """The non-blank lines of a text file (`.gz` too), in file order, long lines kept."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[:limit]


def computed_tokens(lengths, batch_size, system, seq_length):
    """Tokens that `system`'s position-wise layers compute for the full batches of `lengths`.

    `lengths` are packed lengths with [CLS] and [SEP] (at most `seq_length`). bert_tf
    computes the real ones; its padded variant pads to the longest, rounded up as its
    preprocessor does (`PAD_TO_MULTIPLE_OF`); keras-hub to `seq_length` (its only mode); the others
    to the longest.
    """
    total = 0
    for start in range(0, len(lengths) - batch_size + 1, batch_size):
        batch = np.asarray(lengths[start:start + batch_size])
        if system in ("bert_tf", "bert_tf bfloat16"):  # packed: real tokens only
            total += int(batch.sum())
        elif system == "bert_tf padded":
            rounded = -(-int(batch.max()) // PAD_TO_MULTIPLE_OF) * PAD_TO_MULTIPLE_OF
            total += batch_size * min(seq_length, rounded)
        elif system == KERAS_HUB_PEER:
            total += batch_size * seq_length
        else:
            total += batch_size * int(batch.max())
    return total


class WorkerError(RuntimeError):
    """A serving worker exited (usually: its peer package is not installed)."""


class _Worker:
    """One system's worker process, answering JSON requests."""

    def __init__(self, system, python, model_dir, hf_dir, lines_file, work_dir, seq_length,
                 threads):
        env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="3",
                   OMP_NUM_THREADS=str(threads))
        self.process = subprocess.Popen(
            [python, os.path.join(REPO_ROOT, "benchmarks", "serving_worker.py"), "--system", system,
             "--model_dir", model_dir, "--hf_dir", hf_dir, "--lines_file", lines_file,
             "--work_dir", os.path.join(work_dir, system.replace(" ", "_")),
             "--seq_length", str(seq_length), "--threads", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env)
        self.system = system
        self._read()  # {"ready": ...}

    def ask(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()["seconds"]

    def _read(self):
        line = self.process.stdout.readline()
        if not line:
            raise WorkerError(f"The {self.system!r} serving worker exited "
                               f"(code {self.process.wait()}); run benchmarks/serving_worker.py "
                               "by hand to see why.")
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def benchmark_serving(model_dir, hf_dir, lines, lengths, batch_sizes=(32, 128), repeats=3,
                      latency_requests=200, seq_length=128, threads=2, ref_python=None,
                      systems=SYSTEMS, work_dir=None):
    """Lines/s and real tokens/s per batch size, and batch-1 latency, of each system.

    Args:
      model_dir: a bert_tf model directory converted from `hf_dir`.
      hf_dir: the Hugging Face folder (config.json, model.safetensors, tokenizer files).
      lines: real lines in arrival order.
      lengths: their packed lengths (bert_tf's tokenizer, with [CLS]/[SEP], capped).
      ref_python: a Python with torch, transformers and onnxruntime (`.venv-ref/bin/python`);
        without it only the TensorFlow systems run.

    Returns:
      One dict per system and batch size (batch 1: latency p50/p99 in ms).
    """
    work_dir = work_dir or tempfile.mkdtemp(prefix="bert_tf_serving_")
    lines_file = os.path.join(work_dir, "lines.json")
    with open(lines_file, "w", encoding="utf-8") as f:
        json.dump(lines, f)
    workers, rows = {}, []
    try:
        for system in systems:
            python = sys.executable if system in TF_SYSTEMS else ref_python
            if not python:
                rows.append({"system": system, "error": "no --ref_python with its packages"})
                continue
            try:
                workers[system] = _Worker(system, python, model_dir, hf_dir, lines_file,
                                          work_dir, seq_length, threads)
            except WorkerError as error:  # a dev-only peer that is not installed
                rows.append({"system": system, "error": str(error)})
        for batch_size in batch_sizes:
            seconds = interleaved_median_seconds(
                {name: (lambda w=worker, b=batch_size: w.ask({"batch_size": b}))
                 for name, worker in workers.items()}, repeats=repeats)
            served = len(lines) // batch_size * batch_size
            real = sum(lengths[:served])
            for name, s in seconds.items():
                computed = computed_tokens(lengths, batch_size, name, seq_length)
                rows.append({
                    "system": name, "batch_size": batch_size, "lines_per_s": served / s,
                    "real_tokens_per_s": real / s, "real_share_of_computed": real / computed,
                    "vs_keras_hub": seconds[KERAS_HUB_PEER] / s if KERAS_HUB_PEER in seconds
                    else None,
                    "vs_onnxruntime_optimized": seconds[ORT_PEER] / s if ORT_PEER in seconds
                    else None})
        latencies = {name: [] for name in workers}
        for _ in range(repeats):
            for name, worker in workers.items():
                latencies[name] += worker.ask({"latency": latency_requests})
        for name, times in latencies.items():
            rows.append({"system": name, "batch_size": 1,
                         "p50_ms": 1e3 * float(np.percentile(times, 50)),
                         "p99_ms": 1e3 * float(np.percentile(times, 99))})
        return rows
    finally:
        for worker in workers.values():
            worker.close()
