"""Median wall-clock timing of callables, after warm-up (compilation) calls."""

import statistics
import time


def interleaved_median_seconds(runners, repeats=5, warmup=1):
    """Median seconds of each no-argument callable in the dict `runners`, timed in turns.

    Each repeat times every runner once, in order, so that load from other processes (which
    drifts over minutes on a shared machine) falls on all of them alike: the ratio of two
    medians is the figure to quote. Each runner first runs `warmup` times untimed. Runners
    must block until their work is done (e.g. call `.numpy()` on a result). A runner that
    returns a number has timed itself (e.g. without a framework's per-call set-up), and that
    number of seconds counts instead of the wall time.

    Example:
    >>> seconds = interleaved_median_seconds({"a": lambda: None, "b": lambda: None}, repeats=3)
    >>> sorted(seconds)
    ['a', 'b']
    """
    for run in runners.values():
        for _ in range(warmup):
            run()
    times = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            start = time.perf_counter()
            seconds = run()
            if seconds is not None and not isinstance(seconds, float):
                raise TypeError(f"Runner {name!r} returned {type(seconds).__name__}; a runner "
                                "returns None, or a float of seconds when it timed itself.")
            times[name].append(time.perf_counter() - start if seconds is None else seconds)
    return {name: statistics.median(t) for name, t in times.items()}


def median_seconds(fn, repeats=5, warmup=1):
    """Median seconds of `fn()` over `repeats` calls after `warmup` untimed ones."""
    return interleaved_median_seconds({"fn": fn}, repeats, warmup)["fn"]
