"""The progress of `predict_corpus` (lines done, lines/s, ETA), handed to a caller's callback.

The lines are predicted in Beam workers, which may be other processes or machines, and the
DaskRunner keeps no metrics; the output folder is the one place every worker and the launcher
reach. So each worker's model handler counts the lines it predicted in a small file there
(`ProgressFile`, rewritten at most once a second, a name that `writers.remove_partial` removes
with the run's other temporary files), and the launcher sums them in a thread (`Watcher`) and
calls the callback with a `Progress`. The total, for the ETA, is counted in the input files
(Parquet: from its footer), where they hold at most `_COUNTED_BYTES`: before the run starts
when that takes under a second, else beside it.

Example:
>>> watcher = Watcher("out/preds", ["corpus/a.txt"], print)    # doctest: +SKIP
>>> beam_runner.run(pipeline); watcher.stop()                    # doctest: +SKIP
120/3,000 lines, 41.5 lines/s, ETA 1 min 9 s
"""

import contextlib
import dataclasses
import gzip
import json
import threading
import time
import uuid
import zlib

from absl import logging

from bert_tf import file_io

PREFIX = ".progress.tmp-"  # `.` and `.tmp-`: a temporary file of the run (writers)
_COUNTED_BYTES = 1 << 30  # inputs larger than this are not counted: no ETA
_WRITE_SECONDS = 1.0
_COUNT_WAIT_SECONDS = 1.0  # the launcher waits this long for the total before the run


@dataclasses.dataclass(frozen=True)
class Progress:
    """Lines predicted so far, of `total_lines` (None: not counted), after `seconds`."""

    lines: int
    total_lines: int = None
    seconds: float = 0.0

    @property
    def lines_per_second(self):
        return self.lines / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta_seconds(self):
        """Seconds left at the rate so far, or None (no total, no rate yet)."""
        if self.total_lines is None or not self.lines_per_second:
            return None
        return max(self.total_lines - self.lines, 0) / self.lines_per_second

    def __str__(self):
        total = f"/{self.total_lines:,}" if self.total_lines is not None else ""
        eta = self.eta_seconds
        return (f"{self.lines:,}{total} lines, {self.lines_per_second:.1f} lines/s"
                + (f", ETA {_duration(eta)}" if eta is not None else ""))


def _duration(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class ProgressFile:
    """A worker's count of predicted lines, kept in a file of `folder` (thread-safe)."""

    def __init__(self, folder):
        self._path = f"{folder}/{PREFIX}{uuid.uuid4().hex[:12]}"
        self._lines = 0
        self._written = 0.0
        self._lock = threading.Lock()

    def add(self, lines):
        with self._lock:
            self._lines += lines
            if time.monotonic() - self._written >= _WRITE_SECONDS:
                with file_io.open_file(self._path, "w") as f:
                    f.write(json.dumps(self._lines))
                self._written = time.monotonic()


class Watcher:
    """Calls `callback(Progress)` every `interval` seconds (when it moved) until `stop()`.

    Args:
      folder: the run's output folder, where the workers' `ProgressFile`s appear.
      input_files: the input files, counted for the total in a thread of their own.
      callback: a function of a `Progress`, or None for no progress at all.
      interval: seconds between looks at the files.
    """

    def __init__(self, folder, input_files, callback, interval=1.0):
        self._folder, self._callback = folder, callback
        self._stop = threading.Event()
        self._total, self._seen, self._last = [], {}, None
        self._start = time.monotonic()
        self._thread = None
        if callback is None:
            return
        counter = threading.Thread(target=_count_into, daemon=True,
                                   args=(input_files, self._total, self._stop))
        counter.start()
        counter.join(timeout=_COUNT_WAIT_SECONDS)  # most corpora are counted at once
        self._thread = threading.Thread(target=self._watch, args=(interval,), daemon=True)
        self._thread.start()

    def stop(self):
        """Stops watching, after a last look (the callback sees the last counts written)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._look()

    def _watch(self, interval):
        while not self._stop.wait(interval):
            self._look()

    def _look(self):
        try:
            names = file_io.listdir(self._folder)
        except OSError:  # a failed run removed the folder it made
            names = []
        for name in names:
            if name.startswith(PREFIX):
                try:
                    with file_io.open_file(f"{self._folder}/{name}") as f:
                        self._seen[name] = int(f.read())
                except (OSError, ValueError):  # being rewritten or removed: the last count holds
                    pass
        lines = sum(self._seen.values())
        if lines != self._last:
            self._last = lines
            total = self._total[0] if self._total else None
            self._callback(Progress(lines, total, time.monotonic() - self._start))


def _count_into(input_files, total, stop):
    """Appends the inputs' line count to `total`, unless they are large (no ETA then)."""
    try:
        if sum(_size(path) for path in input_files) <= _COUNTED_BYTES:
            total.append(sum(_count_lines(path, stop) for path in input_files))
    except (OSError, ValueError, EOFError, ImportError, zlib.error) as error:
        logging.info("no ETA: cannot count the input lines (%s)", error)  # the run says more


def _size(path):
    file_io.check_regular_file(path, ValueError)  # a FIFO would block the count
    if path.endswith(".parquet"):
        return 0
    with file_io.open_file(path, "rb") as f:
        return f.seek(0, 2)


def _count_lines(path, stop):
    if path.endswith(".parquet"):
        import pyarrow.parquet  # pylint: disable=import-outside-toplevel  (Beam's dependency)
        with file_io.open_file(path, "rb") as f:
            return pyarrow.parquet.ParquetFile(f).metadata.num_rows
    lines, last = 0, b"\n"
    with contextlib.ExitStack() as stack:
        f = stack.enter_context(file_io.open_file(path, "rb"))
        if path.endswith(".gz"):
            f = stack.enter_context(gzip.GzipFile(fileobj=f, mode="rb"))
        while (chunk := f.read(1 << 20)) and not stop.is_set():
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")
