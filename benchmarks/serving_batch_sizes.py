"""Lines/s of the raw-text SavedModel by batch size and dtype: what server-side batching buys.

  python benchmarks/serving_batch_sizes.py --model_dir=/tmp/minilm --lines=512 \
      --batch_size=1 --batch_size=8 --batch_size=32 --batch_size=128 \
      --dtype=float32 --dtype=bfloat16

Real held-out lines in arrival order (the KJV text `--what=serving` reads), served in batches
of each size by the export of each dtype; the exports are timed in turns, round by round,
so other load falls on all alike. Rows: lines/s and ms per batch, and each size's lines/s over
batch 1's (the gain of `--enable_batching` for one-line clients). Never a test.
"""

import json
import os
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

import numpy as np  # noqa: E402


def batch_size_rows(model_dir, lines, batch_sizes, dtypes, rounds=3, work_dir=None):
    import tensorflow as tf

    from bert_tf.export.exporter import export_saved_model

    work_dir = work_dir or tempfile.mkdtemp(prefix="bert_tf_batching_")
    serve = {dtype: tf.saved_model.load(export_saved_model(
        model_dir, os.path.join(work_dir, dtype), "encoder", dtype=dtype)
        ).signatures["serving_default"] for dtype in dtypes}
    seconds = {(d, b): [] for d in dtypes for b in batch_sizes}
    for dtype in dtypes:  # warm-up: every width a batch can have
        for b in batch_sizes:
            serve[dtype](text=tf.constant(lines[:b]))
    for _ in range(rounds):
        for b in batch_sizes:
            count = len(lines) if b > 1 else min(len(lines), 128)
            for dtype in dtypes:
                begin = time.perf_counter()
                for start in range(0, count - b + 1, b):
                    serve[dtype](text=tf.constant(lines[start:start + b]))["pooled_output"].numpy()
                seconds[dtype, b].append((time.perf_counter() - begin) / (count // b * b))
    rows = []
    for dtype in dtypes:
        per_line_1 = np.median(seconds[dtype, batch_sizes[0]])
        for b in batch_sizes:
            per_line = float(np.median(seconds[dtype, b]))
            rows.append({"dtype": dtype, "batch_size": b, "lines_per_s": 1 / per_line,
                         "ms_per_batch": 1e3 * per_line * b,
                         f"vs_batch_{batch_sizes[0]}": per_line_1 / per_line})
    return rows


def main(argv):
    from absl import flags

    from benchmarks.serving import arrival_order_lines

    del argv
    f = flags.FLAGS
    lines = arrival_order_lines(limit=f.lines)
    for row in batch_size_rows(f.model_dir, lines, f.batch_size, f.dtype, f.rounds):
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}),
              flush=True)


if __name__ == "__main__":
    from absl import app, flags

    flags.DEFINE_string("model_dir", None, "A model directory (e.g. the converted MiniLM).",
                        required=True)
    flags.DEFINE_integer("lines", 512, "Held-out lines served per round (batch 1: 128).")
    flags.DEFINE_multi_integer("batch_size", [1, 8, 32, 128], "Batch sizes (first: the base).")
    flags.DEFINE_multi_string("dtype", ["float32", "bfloat16"], "Export dtypes.")
    flags.DEFINE_integer("rounds", 3, "Rounds; the median per line is reported.")
    app.run(main)
