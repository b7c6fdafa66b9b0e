"""Pretraining-data throughput: the offline TFRecord tool and the dynamic pipeline.

Called by `tools/benchmark.py`; never timed in tests.
"""

import tempfile
import time

from bert_tf.data import create_pretraining_data as cpd
from bert_tf.data import dynamic_pretraining


def benchmark_create_pretraining_data(input_file, vocab_file, num_workers=(1, 2), dupe_factor=5,
                                      max_seq_length=128, max_predictions_per_seq=20):
    """Runs the TFRecord tool on `input_file` once per worker count.

    Returns:
      A list of dicts: `num_workers, seconds, sentences_per_s` (input sentences
      tokenized), `examples_per_s` (instances written), `instances` and
      `peak_rss_mb` (summed over processes).
    """
    results = []
    for workers in num_workers:
        options = cpd.Options(vocab_file=vocab_file, dupe_factor=dupe_factor, max_seq_length=max_seq_length,
                              max_predictions_per_seq=max_predictions_per_seq)
        with tempfile.TemporaryDirectory() as output_dir:
            stats = cpd.create_pretraining_data(input_file, f"{output_dir}/records", options,
                                                num_output_shards=max(2, workers), num_workers=workers)
        results.append({"num_workers": workers, "seconds": stats["seconds"],
                        "sentences_per_s": stats["sentences"] / stats["seconds"],
                        "examples_per_s": stats["instances"] / stats["seconds"], "instances": stats["instances"],
                        "peak_rss_mb": stats["peak_rss_mb"]})
    return results


def benchmark_dynamic_pretraining(text_file, vocab_file, batch_size=64, seq_length=128, max_predictions_per_seq=20,
                                  whole_word_mask=False, warmup_batches=5, batches=50):
    """Steady-state examples/s of `dynamic_pretraining_dataset` after `warmup_batches`.

    Returns:
      A dict: `examples_per_s`, `first_batch_seconds` (build, trace and fill the
      shuffle buffer), `batch_size`, `whole_word_mask`.
    """
    start = time.perf_counter()
    dataset = dynamic_pretraining.dynamic_pretraining_dataset(
        text_file, vocab_file, True, batch_size, seq_length, max_predictions_per_seq, whole_word_mask=whole_word_mask)
    iterator = iter(dataset)
    next(iterator)
    first = time.perf_counter() - start
    for _ in range(warmup_batches):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    seconds = time.perf_counter() - start
    return {"examples_per_s": batches * batch_size / seconds, "first_batch_seconds": first,
            "batch_size": batch_size, "whole_word_mask": whole_word_mask}
