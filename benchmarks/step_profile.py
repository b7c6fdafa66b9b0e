"""Where a compiled step's time goes, op by op, from a TensorFlow profiler trace.

`tf.profiler.experimental` writes an `.xplane.pb`; TensorBoard's profile plugin reads it, but
it is not installed with TensorFlow and shows one trace at a time. This sums the op events of
the trace's compute threads by op type and by model part, so a benchmark can print where the
time of a step goes beside its throughput (per step, and as a share of all op time: with two
compute threads the op time of a step exceeds its wall time).
"""

import collections
import glob
import os

import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

# Executor bookkeeping events of the trace, not ops.
_NOT_OPS = ("ThreadpoolListener::", "ExecutorState::", "Memory", "ReadVariableOp")

# Model parts, by the first of these words in an op's name (the Keras layer scopes).
PARTS = (("optimizer", ("fused_adam_w", "adam", "lamb", "clip_by_global_norm")),
         ("masked_lm", ("masked_lm",)),
         ("attention", ("attention",)),
         ("feed_forward", ("intermediate", "/output_1/", "/output/", "output_dense")),
         ("layer_norm", ("layer_norm",)),
         ("embeddings", ("embeddings",)),
         ("next_sentence", ("next_sentence", "pooler")),
         ("loss", ("loss", "sparse_cross_entropy", "top1")))

MATMUL_OPS = ("MatMul", "BatchMatMul", "Einsum")


def part_of(op_name):
    """The model part an op belongs to (see `PARTS`), "other" if none."""
    for part, words in PARTS:
        if any(word in op_name for word in words):
            return part
    return "other"


def profile_step_ops(run, log_dir, num_steps):
    """Traces one `run()` of `num_steps` steps; returns op seconds per step.

    Returns:
      A dict with `by_op_type` and `by_part` (each a dict of seconds per step, largest
      first) and `matmul_share` (matmul op time over all op time).
    """
    tf.profiler.experimental.start(log_dir)
    try:
        run()
    finally:
        tf.profiler.experimental.stop()
    path = max(glob.glob(os.path.join(log_dir, "**", "*.xplane.pb"), recursive=True),
               key=os.path.getmtime)
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    by_type, by_part = collections.Counter(), collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):
                continue
            for event in line.events:
                metadata = plane.event_metadata[event.metadata_id]
                if metadata.name.startswith(_NOT_OPS) or not metadata.display_name:
                    continue
                seconds = event.duration_ps * 1e-12 / num_steps
                by_type[metadata.display_name] += seconds
                by_part[part_of(metadata.name)] += seconds
    total = sum(by_type.values()) or 1.0
    matmul = sum(s for op, s in by_type.items() if any(m in op for m in MATMUL_OPS))
    return {"by_op_type": dict(by_type.most_common()), "by_part": dict(by_part.most_common()),
            "matmul_share": matmul / total}
