"""Median wall-clock timing of a callable, after warm-up (compilation) calls."""

import statistics
import time


def median_seconds(fn, repeats=5, warmup=1):
    """Runs `fn()` `warmup` times untimed, then `repeats` times; returns the median seconds.

    `fn` must block until its work is done (e.g. call `.numpy()` on a result).
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
