"""The Keras dtype policies a run may use, set for a scope and always restored.

Keras keeps the policy in a global; a run that sets it and fails (or a test that forgets to
reset it) would leak it into everything built afterwards, so runs use `policy_scope`.

Example:
>>> with policy_scope("mixed_bfloat16"):
...     layer = keras.layers.Dense(4)     # computes in bfloat16, variables in float32
>>> keras.mixed_precision.global_policy().name
'float32'
"""

import contextlib
import os
import time

import keras

DTYPES = ("float32", "mixed_bfloat16", "mixed_float16")
AUTO = "auto"
# mixed_bfloat16 pays casts and LayerNorms in float32 on top of its matmuls: it is chosen only
# where bfloat16 matmuls are this much faster than float32 ones (AVX512-BF16 EPYC: 1.95x;
# AVX2 with bf16 emulated: ~1.0x, where it gave nothing: 9.36 vs 9.57 seq/s at 4L/256).
BFLOAT16_MIN_SPEEDUP = 1.3


def measured_matmul_flops(dtype, size=2048, matmuls=4, repeats=4):
    """FLOP/s of this machine's default device on `size`² matmuls in `dtype`'s compute dtype.

    The fastest of `repeats` timings of `matmuls` chained products (after one warm-up): what
    the math library reaches on a shape that large, a ceiling for a model step. The fastest,
    not the median: other processes on the machine only ever slow a timing down. The
    defaults (the benchmarks' machine rows) cost ~1.2 s of float32 on 2 cores at ~300
    GFLOP/s; 8 products x 7 repeats took ~4-7 s each time a benchmark printed its machine.
    """
    import tensorflow as tf  # here: `import bert_tf` stays free of TensorFlow

    compute = tf.as_dtype(dtype.replace("mixed_", ""))
    a = tf.cast(tf.random.stateless_normal([size, size], seed=[1, 2]) / size ** 0.5, compute)

    @tf.function
    def chain(x):
        for _ in range(matmuls):
            x = tf.matmul(x, a)
        return x

    chain(a).numpy()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        chain(a).numpy()
        seconds.append(time.perf_counter() - start)
    return 2 * size ** 3 * matmuls / min(seconds)


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


def native_bfloat16(flags=None):
    """The flags of `NATIVE_BFLOAT16_FLAGS` this CPU has and oneDNN may use (empty: none).

    Without them oneDNN has no bfloat16 matmul: an AVX2 CPU emulates it (no faster), and under
    `ONEDNN_MAX_CPU_ISA=AVX2` its matmul primitive cannot even be made (the process aborts).

    Args:
      flags: the CPU flags to decide by (default: this machine's, `cpu_flags()`).
    """
    flags = cpu_flags() if flags is None else set(flags)
    limit = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    allowed = limit in ("ALL", "DEFAULT") or any(
        part in limit for part in ("BF16", "AMX", "AVX10", "FP16"))
    return [flag for flag in NATIVE_BFLOAT16_FLAGS if flag in flags] if allowed else []


def fastest_dtype():
    """`(policy, why)` for `--dtype=auto`: mixed_bfloat16 where this machine's bfloat16
    matmuls are clearly faster than float32 ones, float32 elsewhere.

    GPUs: bfloat16 from compute capability 8.0 (Ampere). CPUs: only with native bfloat16
    (`native_bfloat16`), and then measured (~0.5 s), since the rest of a mixed step stays in
    float32.
    """
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        capabilities = [tf.config.experimental.get_device_details(gpu).get(
            "compute_capability", (0, 0)) for gpu in gpus]
        ampere = all(tuple(c) >= (8, 0) for c in capabilities)
        return ("mixed_bfloat16" if ampere else "float32",
                f"GPU compute capability {min(tuple(c) for c in capabilities)}")
    if not native_bfloat16():
        return "float32", "this CPU has no bfloat16 instructions oneDNN may use"
    rates = {dtype: measured_matmul_flops(dtype, size=1024, matmuls=4, repeats=3)
             for dtype in ("float32", "mixed_bfloat16")}
    speedup = rates["mixed_bfloat16"] / rates["float32"]
    dtype = "mixed_bfloat16" if speedup >= BFLOAT16_MIN_SPEEDUP else "float32"
    why = (f"bfloat16 matmuls {rates['mixed_bfloat16'] / 1e9:.0f} GFLOP/s, float32 "
           f"{rates['float32'] / 1e9:.0f} GFLOP/s here ({speedup:.2f}x; bfloat16 from "
           f"{BFLOAT16_MIN_SPEEDUP}x)")
    return dtype, why


@contextlib.contextmanager
def policy_scope(name):
    """Sets the global Keras dtype policy to `name` inside the block, then restores the old one."""
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
