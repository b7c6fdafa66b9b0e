"""The corpus side of `tools/predict.py`: input files -> `Line`s to predict on, and their counts.

Three layouts, told apart by the file name:
- text (any other name, `.gz` ok): one example a line; its id is `<path>:<line number>`
  (1-based, the path as the `--input_file` glob gave it);
- JSON lines (`.jsonl`, `.jsonl.gz`): one object a line; the text is `text_column`, the id
  `id_column` (else `<path>:<line number>`);
- Parquet (`.parquet`): the same columns, read in record batches; row numbers are 1-based.
Empty texts are skipped and counted; lines that are not UTF-8 (or hold NUL bytes) are skipped
and counted, or fatal with `undecodable="fail"`. A text line longer than `max_line_bytes` is
cut there while it is read (counted: a small `.gz` may hold a line of gigabytes); such a JSON
line is refused. A missing column, a line that is not a JSON object (or nests too deep) or
an id that is not a string or number stops the run with an `InputError` naming file, line and
column; so does a damaged `.gz` or `.parquet` file, and an input that is not a regular file (a
FIFO or a device would never end). Files are read as streams: a corpus never has to fit in
memory.

Example:
>>> reader = LineReader(text_column="text")
>>> [line.id for line in reader.lines("corpus/a.txt")]   # doctest: +SKIP
['corpus/a.txt:1', 'corpus/a.txt:3']
"""

import collections
import contextlib
import dataclasses
import gzip
import zlib

from absl import logging

from bert_tf import errors, file_io
from bert_tf.data.document_reader import InputError

UNDECODABLE_POLICIES = ("skip", "fail")
# Counts a reader keeps per file (`LineReader.counts` after `lines`).
SKIP_COUNTERS = ("empty_lines", "undecodable_lines", "cut_lines")
_NAMED_BAD_LINES = 10  # undecodable lines named one by one per file; the rest only counted
_PARQUET_BATCH_ROWS = 1024
# A model reads a few thousand characters of a line (many more only as --long_lines=windows).
MAX_LINE_BYTES = 1 << 20


class Line(collections.namedtuple("Line", ["id", "text", "order"])):
    """One example: its `id`, its `text`, and `order` = (file index, 1-based line/row)."""


@dataclasses.dataclass
class LineReader:
    """Reads the lines of one file at a time; `counts` then holds what it skipped there.

    Attributes:
      text_column: the text's key in JSON lines and Parquet files.
      id_column: the id's key there, or None for `<path>:<line number>` ids.
      undecodable: "skip" (count and warn) or "fail" (raise `InputError`) on a line that is
        not UTF-8.
      max_line_bytes: a longer line is cut there (counted in `cut_lines`), a JSON one refused.
    """

    text_column: str = "text"
    id_column: str = None
    undecodable: str = "skip"
    max_line_bytes: int = MAX_LINE_BYTES
    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def lines(self, path, file_index=0, name=None):
        """Yields the `Line`s of `path` with text; `name` (default `path`) goes into the ids.

        Raises:
          InputError: an unreadable or corrupt file, a missing column, bad JSON, a bad id, or
            (with `undecodable="fail"`) a line that is not UTF-8.
        """
        self.counts = collections.Counter()
        name = name or path
        file_io.check_regular_file(path, InputError)
        if path.endswith(".parquet"):
            rows = self._parquet_rows(path)
        else:
            rows = self._text_rows(path, json_lines=path.endswith((".jsonl", ".jsonl.gz")))
        for number, text, line_id in rows:
            if not text.strip():
                self.counts["empty_lines"] += 1
                continue
            yield Line(f"{name}:{number}" if line_id is None else line_id, text,
                       (file_index, number))

    def _text_rows(self, path, json_lines):
        """(line number, text, id or None) of a text or JSON lines file."""
        number = 0
        try:
            with contextlib.ExitStack() as stack:
                lines = stack.enter_context(file_io.open_file(path, "rb"))
                if path.endswith(".gz"):
                    lines = stack.enter_context(gzip.GzipFile(fileobj=lines, mode="rb"))
                for number, (raw_line, cut) in enumerate(
                        file_io.bounded_lines(lines, self.max_line_bytes), 1):
                    if cut:
                        self._count_cut(path, number, json_lines)
                    line = self._decode(raw_line, path, number)
                    if line is None:
                        continue
                    if not json_lines:
                        yield number, line, None
                    elif line.strip():
                        where = f"{path}:{number}"
                        record = file_io.json_line_object(line, where, InputError,
                                                          " with the text column")
                        yield (number, *self._from_record(record, where))
                    else:
                        yield number, "", None
        except (OSError, EOFError, zlib.error) as error:  # gzip's errors: damaged or cut short
            hint = " (a damaged or partly copied .gz?)" if path.endswith(".gz") else ""
            raise InputError(f"{path}: cannot read line {number + 1}: "
                             f"{error or type(error).__name__}{hint}") from None

    def _count_cut(self, path, number, json_lines):
        """Counts a line cut at `max_line_bytes` (a JSON line cannot be cut: refused)."""
        if json_lines:
            raise InputError(f"{path}:{number}: a JSON line over {self.max_line_bytes} bytes; "
                             "split the record or raise --max_line_bytes")
        if self.counts["cut_lines"] < _NAMED_BAD_LINES:
            logging.warning("%s:%d: cut a line at %d bytes", path, number, self.max_line_bytes)
        self.counts["cut_lines"] += 1

    def _decode(self, raw_line, path, number):
        """The line as text, or None for one that is not UTF-8 (skipped and counted)."""
        try:
            line = raw_line.decode("utf-8")
            reason = "holds NUL bytes" if "\x00" in line else None
        except UnicodeDecodeError as error:
            reason = f"is not UTF-8 ({error.reason} at byte {error.start})"
        if reason is None:
            return line
        if self.undecodable == "fail":
            raise InputError(f"{path}:{number}: the line {reason}; fix the file or pass "
                             "--undecodable_lines=skip")
        if self.counts["undecodable_lines"] < _NAMED_BAD_LINES:
            logging.warning("%s:%d: skipping a line that %s", path, number, reason)
        self.counts["undecodable_lines"] += 1
        return None

    def _parquet_rows(self, path):
        """(row number, text, id or None) of a Parquet file, read a record batch at a time."""
        parquet = errors.require_extra("pyarrow.parquet", extra="beam")
        arrow_error = errors.require_extra("pyarrow", extra="beam").ArrowException
        try:
            with file_io.open_file(path, "rb") as f:
                table = parquet.ParquetFile(f)
                columns = [c for c in (self.text_column, self.id_column) if c is not None]
                _require_columns(table.schema_arrow.names, columns, path)
                number = 0
                for batch in table.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=columns):
                    for record in batch.to_pylist():
                        number += 1
                        yield (number, *self._from_record(record, f"{path} row {number}"))
        except (OSError, arrow_error) as error:
            reason = str(error).strip().split("\n")[0]  # pyarrow's messages run over lines
            raise InputError(f"{path}: cannot read it as Parquet (a damaged or partly copied "
                             f"file?): {reason}") from None

    def _from_record(self, record, where):
        """(text, id or None) of a JSON object or Parquet row, checked."""
        _require_columns(record, [c for c in (self.text_column, self.id_column) if c], where)
        text = record[self.text_column]
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise InputError(f"{where}: column {self.text_column!r} holds "
                             f"{type(text).__name__}, not text")
        if self.id_column is None:
            return text, None
        line_id = record[self.id_column]
        if isinstance(line_id, bool) or not isinstance(line_id, (str, int, float)):
            raise InputError(f"{where}: column {self.id_column!r} holds "
                             f"{type(line_id).__name__}; an id is a string or a number")
        return text, line_id


def _require_columns(names, columns, where):
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(f"{where}: no column {missing[0]!r} (it has: "
                         f"{', '.join(sorted(names)) or 'none'}); name another with "
                         "--text_column / --id_column")
