"""Serving throughput and latency on real sentences (`tools/benchmark.py --what=serving`).

Raw strings in, tokenization included, in one process:
- "bert_tf export": the exported encoder SavedModel's `serving_default` (each request packed to
  its own longest sentence, the export default), loaded back;
- "bert_tf export, fixed": the same export with `padding="fixed"` (every request `seq_length`);
- "keras_hub BertBackbone": its `BertTextClassifierPreprocessor` (fixed `seq_length`) and
  `BertBackbone` of the same shape in one `tf.function`, keras-hub's best case.
Sentences/s at `batch_size` (medians timed in turns), and batch-1 latency p50/p99 over single
sentences, the runners called in turns per request. Never a test.
"""

import os
import tempfile
import time

import numpy as np
import tensorflow as tf

from bert_tf.benchmarking.keras_hub_peer import keras_hub_backbone
from bert_tf.benchmarking.timing import interleaved_median_seconds
from bert_tf.checkpoints.model_dir import read_config
from bert_tf.export.exporter import export_saved_model
from bert_tf.model_dir_reader import vocab_path

KERAS_HUB_PEER = "keras_hub BertBackbone"


def _export(model_dir, seq_length, padding, work_dir):
    path = export_saved_model(model_dir, os.path.join(work_dir, padding), "encoder",
                              seq_length=seq_length, padding=padding)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    return lambda texts: serve(text=texts)["pooled_output"]


def _keras_hub(model_dir, seq_length, lower_case):
    import keras_hub  # dev-only peer

    config = read_config(model_dir)
    backbone = keras_hub_backbone(config)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=vocab_path(model_dir), lowercase=lower_case),
        sequence_length=seq_length)
    forward = tf.function(lambda texts: backbone(preprocessor(texts), training=False)[
        "pooled_output"], input_signature=[tf.TensorSpec([None], tf.string)])
    return forward


def _over_batches(serve, batches):
    def run():
        for batch in batches:
            serve(batch).numpy()
    return run


def batch_one_latencies(runners, sentences, warmup=5):
    """`{name: sorted seconds}` of single-sentence requests, the runners called in turns."""
    times = {name: [] for name in runners}
    for sentence in sentences[:warmup]:
        for serve in runners.values():
            serve(tf.constant([sentence])).numpy()
    for sentence in sentences:
        request = tf.constant([sentence])
        for name, serve in runners.items():
            start = time.perf_counter()
            serve(request).numpy()
            times[name].append(time.perf_counter() - start)
    return {name: sorted(t) for name, t in times.items()}


def benchmark_serving(model_dir, sentences, batch_size=32, seq_length=128, repeats=3,
                      latency_requests=200, lower_case=True, work_dir=None):
    """Sentences/s at `batch_size` and batch-1 latency (ms, p50/p99) of each runner.

    Args:
      model_dir: a model directory (the converted MiniLM).
      sentences: list of str, real sentences; full batches of them are served per repeat.
      latency_requests: single-sentence requests for the latency figures.

    Returns:
      One dict per runner.
    """
    work_dir = work_dir or tempfile.mkdtemp(prefix="bert_tf_serving_")
    runners = {"bert_tf export": _export(model_dir, seq_length, "longest", work_dir),
               "bert_tf export, fixed": _export(model_dir, seq_length, "fixed", work_dir)}
    try:
        runners[KERAS_HUB_PEER] = _keras_hub(model_dir, seq_length, lower_case)
    except ImportError:
        pass
    batches = [tf.constant(sentences[i:i + batch_size])
               for i in range(0, len(sentences) - batch_size + 1, batch_size)]
    served = len(batches) * batch_size
    seconds = interleaved_median_seconds(
        {name: _over_batches(serve, batches) for name, serve in runners.items()},
        repeats=repeats)
    latencies = batch_one_latencies(runners, sentences[:latency_requests])
    peer = seconds.get(KERAS_HUB_PEER)
    rows = []
    for name, s in seconds.items():
        times = latencies[name]
        rows.append({
            "implementation": name, "what": "serving", "batch_size": batch_size,
            "seq_length": seq_length, "sentences": served, "seconds": s,
            "sentences_per_s": served / s, "vs_keras_hub": peer / s if peer else None,
            "batch_1_p50_ms": 1e3 * float(np.percentile(times, 50)),
            "batch_1_p99_ms": 1e3 * float(np.percentile(times, 99))})
    return rows
