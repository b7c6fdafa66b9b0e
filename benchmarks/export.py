"""Benchmark of an export (for benchmarks/benchmark.py; run by hand, never as a test).

Measures what a TF Serving operator sees: SavedModel size on disk, load time in a fresh Python
process (which imports only tensorflow + tensorflow_text), and the median latency of
`serving_default` on raw strings at batch 1 and 32.

Example:
>>> rows = benchmark_export("/tmp/minilm", task="encoder")  # doctest: +SKIP
"""

import os
import subprocess
import sys
import tempfile
import time

import tensorflow as tf

from benchmarks.timing import median_seconds
from bert_tf.export.exporter import export_saved_model

_LOAD_SCRIPT = (
    "import sys, time, tensorflow as tf, tensorflow_text\n"
    "start = time.perf_counter(); tf.saved_model.load(sys.argv[1])\n"
    "print(time.perf_counter() - start)\n")
# A BBC-news-like sentence of ~40 WordPieces; requests repeat it to the batch size.
_SENTENCE = ("The chancellor said on Tuesday that the economy grew faster than expected in the "
             "third quarter, lifting shares in London and Frankfurt.")


def directory_bytes(path):
    """Total size of the files under `path`."""
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def fresh_process_load_seconds(export_path, repeats=3):
    """Median seconds of `tf.saved_model.load` in new interpreters (TF import not counted)."""
    times = []
    for _ in range(repeats):
        result = subprocess.run([sys.executable, "-c", _LOAD_SCRIPT, export_path],
                                capture_output=True, text=True, check=True,
                                env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
        times.append(float(result.stdout.strip().splitlines()[-1]))
    return sorted(times)[len(times) // 2]


def _request(signature, batch_size):
    names = list(signature.structured_input_signature[1])
    texts = tf.constant([_SENTENCE] * batch_size)
    return {name: texts for name in names}


def benchmark_export(model_dir, task="encoder", seq_length=None, batch_sizes=(1, 32),
                     repeats=20, work_dir=None):
    """Exports `model_dir` and measures the export.

    Args:
      model_dir: a model directory (e.g. the converted MiniLM).
      task: an export task whose `serving_default` takes `[B]` strings (not multiple_choice).
      seq_length: packed length (default: the task's).
      batch_sizes: request sizes to time.
      repeats: timed calls per batch size; the median is reported.
      work_dir: where to write the export (default: a temporary folder).

    Returns:
      A list of dict rows: one with `export_mb`, `export_s`, `fresh_load_s`, then one per
      batch size with `batch_size`, `latency_ms` (median) and `seq_per_s`.
    """
    work_dir = work_dir or tempfile.mkdtemp(prefix="bert_tf_export_bench_")
    start = time.perf_counter()
    path = export_saved_model(model_dir, os.path.join(work_dir, task), task,
                              seq_length=seq_length)
    rows = [{"what": "export", "task": task, "export_s": time.perf_counter() - start,
             "export_mb": directory_bytes(path) / 2**20,
             "fresh_load_s": fresh_process_load_seconds(path)}]
    signature = tf.saved_model.load(path).signatures["serving_default"]
    for batch_size in batch_sizes:
        request = _request(signature, batch_size)
        seconds = median_seconds(lambda: [t.numpy() for t in signature(**request).values()],
                                 repeats=repeats, warmup=2)
        rows.append({"what": "serving_default", "task": task, "batch_size": batch_size,
                     "latency_ms": 1000 * seconds, "seq_per_s": batch_size / seconds})
    return rows
