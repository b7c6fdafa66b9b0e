"""TF Serving's server-side batching settings, written beside each export.

`tensorflow_model_server --enable_batching --batching_parameters_file=<export>/
batching_parameters.txt --model_base_path=<export_dir>` merges concurrent requests into one
batch (their `[B]` string inputs are concatenated, the batch runs once, outputs are split back),
which is where CPU throughput comes from: on the converted MiniLM the raw-text export serves
2.25x (float32) to 3.3x (bfloat16) the lines/s of batch 1 at batch 32 (docs/design.md,
"Serving: batch 1, TFLite, bf16"). The file is TF Serving's `BatchingParameters` text proto.

Example:
>>> print(batching_parameters_text(max_batch_size=32))  # doctest: +SKIP
max_batch_size { value: 32 }
...
"""

import os

BATCHING_PARAMETERS_FILE = "batching_parameters.txt"

# Defaults and why (measured on the 2-core machines of docs/lab/2026-12-05-serving.md):
# - 32 rows: past 32 the lines/s of real text in arrival order grow little or not at all
#   (152 -> 187 at 128 on AMD EPYC, 285 -> 270 bf16 on a loaded Xeon) while a batch's
#   latency grows 4x;
# - 5 ms: a request waits at most about half of a batch-1 request's own time for company;
# - 16 queued batches: a full queue is ~16 batch times (~3 s at 32 rows), after which TF
#   Serving refuses requests (UNAVAILABLE) instead of letting latency grow without bound.
DEFAULT_MAX_BATCH_SIZE = 32
DEFAULT_BATCH_TIMEOUT_MICROS = 5000
DEFAULT_MAX_ENQUEUED_BATCHES = 16


def default_num_batch_threads():
    """Batches run at once: one per two cores (each batch's matmuls use several cores)."""
    return max(1, (os.cpu_count() or 2) // 2)


def batching_parameters_text(max_batch_size=DEFAULT_MAX_BATCH_SIZE,
                             batch_timeout_micros=DEFAULT_BATCH_TIMEOUT_MICROS,
                             num_batch_threads=None,
                             max_enqueued_batches=DEFAULT_MAX_ENQUEUED_BATCHES,
                             allowed_batch_sizes=None):
    """TF Serving's `BatchingParameters` text proto.

    Args:
      max_batch_size: the most rows of one merged batch.
      batch_timeout_micros: how long a batch waits to fill before it runs.
      num_batch_threads: batches processed in parallel (default `default_num_batch_threads`).
      max_enqueued_batches: queued batches beyond which requests are refused.
      allowed_batch_sizes: increasing sizes ending at `max_batch_size` to pad batches up to,
        or None (the default: any size; see the comment written in the file).

    Raises:
      ValueError: a non-positive value, or allowed sizes not increasing to `max_batch_size`.
    """
    num_batch_threads = num_batch_threads or default_num_batch_threads()
    values = {"max_batch_size": max_batch_size, "batch_timeout_micros": batch_timeout_micros,
              "num_batch_threads": num_batch_threads,
              "max_enqueued_batches": max_enqueued_batches}
    for name, value in values.items():
        if not isinstance(value, int) or value < (0 if name == "batch_timeout_micros" else 1):
            raise ValueError(f"batching parameter {name} must be a positive integer; "
                             f"received {value!r}.")
    lines = ["# TF Serving batching parameters (BatchingParameters text proto), written by "
             "bert_tf's export.",
             "# tensorflow_model_server --enable_batching --batching_parameters_file=<this "
             "file> ..."]
    lines += [f"{name} {{ value: {value} }}" for name, value in values.items()]
    if allowed_batch_sizes:
        sizes = list(allowed_batch_sizes)
        if sizes != sorted(set(sizes)) or sizes[-1] != max_batch_size or sizes[0] < 1:
            raise ValueError(f"allowed_batch_sizes must increase and end at max_batch_size="
                             f"{max_batch_size}; received {sizes}.")
        lines += [f"allowed_batch_sizes: {size}" for size in sizes]
    else:
        lines += ["# allowed_batch_sizes is left unset: the export takes any batch size (graph "
                  "mode, no XLA),",
                  "# and padding a batch up to an allowed size adds rows that are computed "
                  "like real ones.",
                  "# Set it (e.g. 8, 16, 32) only for a runtime that compiles one program per "
                  "shape."]
    # Inputs are [B] strings: requests always concatenate, nothing to pad.
    lines.append("pad_variable_length_inputs: false")
    return "\n".join(lines) + "\n"


def write_batching_parameters(folder, **kwargs):
    """Writes `batching_parameters_text(**kwargs)` to `folder/batching_parameters.txt`."""
    path = os.path.join(folder, BATCHING_PARAMETERS_FILE)
    with open(path, "w", encoding="utf-8") as f:
        f.write(batching_parameters_text(**kwargs))
    return path
