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

from bert_tf.export.serving_module import ExportError

EXPORT_DTYPES = ("auto", "float32", "bfloat16")
# /proc/cpuinfo flags of native bfloat16 arithmetic (AVX512-BF16 dot products, AMX tiles).
NATIVE_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The CPU's feature flags (Linux's /proc/cpuinfo); empty where that file is absent."""
    try:
        with open(cpuinfo, encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def resolve_dtype(dtype, flags=None):
    """`(dtype, reason)`: "float32" or "bfloat16" for `dtype` in `EXPORT_DTYPES`.

    Args:
      dtype: "auto" (bfloat16 where this CPU has `NATIVE_BFLOAT16_FLAGS`, else float32),
        "float32" or "bfloat16".
      flags: the CPU flags to decide by (default: this machine's, `cpu_flags()`).

    Raises:
      ExportError: an unknown dtype.
    """
    if dtype not in EXPORT_DTYPES:
        raise ExportError(f"dtype must be one of {', '.join(EXPORT_DTYPES)}; received {dtype!r}.")
    if dtype != "auto":
        return dtype, f"asked for (--dtype={dtype})"
    flags = cpu_flags() if flags is None else set(flags)
    native = [flag for flag in NATIVE_BFLOAT16_FLAGS if flag in flags]
    if native:
        return "bfloat16", f"--dtype=auto: this CPU has native bfloat16 ({', '.join(native)})"
    return "float32", (f"--dtype=auto: this CPU ({platform.machine()}) has none of "
                       f"{', '.join(NATIVE_BFLOAT16_FLAGS)}")
