"""The export's compute dtype: `--dtype=auto|float32|bfloat16`.

bfloat16 halves the weights and, on CPUs with native bfloat16 matmuls (avx512_bf16, AMX), runs
the encoder's matmuls in oneDNN's bfloat16 kernels; elsewhere bfloat16 is emulated and slower
than float32. "auto" decides from the CPU of the machine that exports, so export on (a machine
like) the one that serves. Measured reasons: docs/design.md, "Serving: batch 1, TFLite, bf16".

Example:
>>> resolve_dtype("float32")
('float32', 'asked for (--dtype=float32)')
"""

import platform

from bert_tf.dtype_policy import NATIVE_BFLOAT16_FLAGS, native_bfloat16
from bert_tf.export.serving_module import ExportError

EXPORT_DTYPES = ("auto", "float32", "bfloat16")
def resolve_dtype(dtype, flags=None):
    """`(dtype, reason)`: "float32" or "bfloat16" for `dtype` in `EXPORT_DTYPES`.

    Args:
      dtype: "auto" (bfloat16 where this CPU has `NATIVE_BFLOAT16_FLAGS`, else float32),
        "float32" or "bfloat16".
      flags: the CPU flags to decide by (default: this machine's, `dtype_policy.cpu_flags()`).

    Raises:
      ExportError: an unknown dtype.
    """
    if dtype not in EXPORT_DTYPES:
        raise ExportError(f"dtype must be one of {', '.join(EXPORT_DTYPES)}; received {dtype!r}.")
    if dtype != "auto":
        return dtype, f"asked for (--dtype={dtype})"
    native = native_bfloat16(flags)
    if native:
        return "bfloat16", f"--dtype=auto: this CPU has native bfloat16 ({', '.join(native)})"
    return "float32", (f"--dtype=auto: this CPU ({platform.machine()}) has none of "
                       f"{', '.join(NATIVE_BFLOAT16_FLAGS)}")
