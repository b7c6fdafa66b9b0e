"""Model FLOP utilisation (MFU): achieved matmul FLOP/s over the chip's dense peak.

The FLOPs are `benchmarks/flops.py`'s formula (matmuls only), so MFU is comparable across
runs and with published figures (PaLM's definition, without rematerialisation). Peaks are the
vendors' dense (no sparsity) tensor-core figures; float32 on NVIDIA GPUs means TF32, which
TensorFlow uses for float32 matmuls by default. None when no listed GPU is present.

CPUs have no such table (the same "AMD EPYC" name covers parts of very different speed), so
`dtype_policy.measured_matmul_flops` times one large matmul on the machine itself:
the ceiling a step's FLOP/s is set against.
"""

import tensorflow as tf

# Dense peak TFLOP/s by (device-name substring, compute dtype): NVIDIA data sheets (SXM parts).
PEAK_TFLOPS = {
    "H200": {"bfloat16": 989.0, "float16": 989.0, "float32": 494.0},
    "H100": {"bfloat16": 989.0, "float16": 989.0, "float32": 494.0},
    "A100": {"bfloat16": 312.0, "float16": 312.0, "float32": 156.0},
    "L4": {"bfloat16": 121.0, "float16": 121.0, "float32": 60.0},
    "A10": {"bfloat16": 125.0, "float16": 125.0, "float32": 62.5},
    "V100": {"float16": 125.0, "float32": 15.7},
    "T4": {"float16": 65.0, "float32": 8.1},
}


def gpu_name():
    """The first GPU's device name (e.g. "NVIDIA H200"), or None without a GPU."""
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return None
    return tf.config.experimental.get_device_details(gpus[0]).get("device_name", "")


def peak_flops(dtype, name=None):
    """Dense peak FLOP/s of the GPU `name` (default: the first GPU) for a Keras dtype policy
    (`mixed_bfloat16` -> bfloat16), or None when no GPU or no listed one is present."""
    name = name if name is not None else gpu_name()
    compute = dtype.replace("mixed_", "")
    for key, peaks in PEAK_TFLOPS.items():
        if name and key in name and compute in peaks:
            return peaks[compute] * 1e12
    return None


def model_flop_utilization(flops_per_second, dtype, name=None):
    """`flops_per_second / peak_flops(dtype)`, or None without a known GPU."""
    peak = peak_flops(dtype, name)
    return flops_per_second / peak if peak else None
