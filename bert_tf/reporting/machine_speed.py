"""How fast this machine multiplies matrices: the figure to quote beside any run time.

A run's wall time alone cannot tell a slow machine from a slow program; a shared 2-core VM
and a quiet one can differ 2×. The closing summary of a pretraining run and the step
benchmark print this rate, measured on the spot, beside their own figures.
"""

from bert_tf.dtype_policy import measured_matmul_flops


def speed_line(seconds, dtype):
    """"This run took 4 min 12 s; this machine's bfloat16 matmul rate: 410 GFLOP/s (...)"."""
    minutes, rest = divmod(round(seconds), 60)
    took = f"{minutes} min {rest} s" if minutes else f"{rest} s"
    compute = dtype.replace("mixed_", "")
    rate = measured_matmul_flops(dtype, size=1024, repeats=3) / 1e9
    return (f"This run took {took}; this machine's {compute} matmul rate: {rate:.0f} GFLOP/s "
            "(1024² matmuls, measured now; quote both to compare machines).")
