"""How fast this machine multiplies matrices: the figure to quote beside any run time.

A run's wall time alone cannot tell a slow machine from a slow program; a shared 2-core VM
and a quiet one can differ 2×. The closing summary of a pretraining run and the step
benchmark print this rate, measured on the spot, beside their own figures.
"""

import time

import tensorflow as tf


def measured_matmul_flops(dtype, size=2048, matmuls=8, repeats=7):
    """FLOP/s of this machine's default device on `size`² matmuls in `dtype`'s compute dtype.

    The fastest of `repeats` timings of `matmuls` chained products (after one warm-up): what
    the math library reaches on a shape that large, a ceiling for a model step. The fastest,
    not the median: other processes on the machine only ever slow a timing down.
    """
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


def speed_line(seconds, dtype):
    """"This run took 4 min 12 s; this machine's bfloat16 matmul rate: 410 GFLOP/s (...)"."""
    minutes, rest = divmod(round(seconds), 60)
    took = f"{minutes} min {rest} s" if minutes else f"{rest} s"
    compute = dtype.replace("mixed_", "")
    rate = measured_matmul_flops(dtype, size=1024, repeats=3) / 1e9
    return (f"This run took {took}; this machine's {compute} matmul rate: {rate:.0f} GFLOP/s "
            "(1024² matmuls, measured now; quote both to compare machines).")
