r"""Rows of TSV, CSV and JSONL files as dicts, each with the line it came from.

TSV is read without quote processing (GLUE's files contain unbalanced quotes; google-research
reads them with `quotechar=None` too); CSV uses standard quoting; JSONL has one JSON object a line.
Lines end at "\n" only (a "\r" before it is dropped): U+2028 or a form feed inside a text is
text, so line numbers in errors are those of an editor. A row with more fields than the header
(a tab inside a TSV text, an unquoted comma in a CSV) is an error naming its line: TSV has no
quoting, so its columns cannot be recovered.
"""

import csv
import os

from bert_tf import file_io
from bert_tf.errors import UserError

FORMATS = ("tsv", "csv", "jsonl")


class DataError(UserError, ValueError):
    """Bad task data; the message names the file and line."""


def file_format(path):
    """`tsv`, `csv` or `jsonl` from the file name (`.txt` counts as TSV)."""
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    extension = {"txt": "tsv", "json": "jsonl", "ndjson": "jsonl"}.get(extension, extension)
    if extension not in FORMATS:
        raise DataError(f"{path}: cannot tell the format from the extension; expected one of "
                        f".tsv, .csv, .jsonl.")
    return extension


def read_text(path):
    """The UTF-8 text of `path`.

    Raises:
      DataError: the file is missing, is a folder, a FIFO or a device, or is not valid UTF-8
        (line and column named).
    """
    if not file_io.exists(path):
        raise DataError(f"Data file not found: {path}")
    if file_io.isdir(path):
        raise DataError(f"{path} is a folder; expected a data file.")
    file_io.check_regular_file(path, DataError)  # a FIFO or a device would never end
    with file_io.open_file(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        raise DataError(f"{path}:{line}: not valid UTF-8 "
                        f"(byte 0x{data[error.start]:02x} at column "
                        f"{error.start - line_start + 1}); save the file as UTF-8.") from None


def split_lines(text):
    r"""Lines of `text` split at "\n" only, without a trailing "\r" (`str.splitlines` also
    splits at U+2028, form feeds and other characters that may occur inside a text)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if lines and not lines[-1] else lines


def read_rows(path, columns=None, fieldnames=None):
    """Reads `path` into a list of `(line_number, row_dict)`.

    Args:
      path: a `.tsv`, `.csv` or `.jsonl` file (any filesystem tf.io.gfile reads).
      columns: names that every row must have; a missing one raises `DataError` naming it.
      fieldnames: column names for a TSV/CSV file without a header line (CoLA's train/dev).

    Raises:
      DataError: the file is missing, empty or not UTF-8, a row lacks a column or has more
        fields than the header, or a JSONL line is not an object; the message gives the file
        and line.
    """
    text = read_text(path)
    if not text.strip():
        raise DataError(f"{path} is empty: no header and no examples.")
    lines = split_lines(text)
    if file_format(path) == "jsonl":
        rows = _json_rows(path, lines)
    else:
        rows = _delimited_rows(path, lines, fieldnames)
    if not rows:
        raise DataError(f"{path} has a header but no examples.")
    for number, row in rows:
        missing = [name for name in columns or () if row.get(name) is None]
        if missing:
            raise DataError(f"{path}:{number}: missing column(s) {missing}; "
                            f"the row has {sorted(row)}.")
    return rows


def _json_rows(path, lines):
    return [(number, file_io.json_line_object(line, f"{path}:{number}", DataError))
            for number, line in enumerate(lines, start=1) if line.strip()]


def _delimited_rows(path, lines, fieldnames):
    tsv = file_format(path) == "tsv"
    # Lines keep their "\n" so that a quoted CSV field may span lines.
    lines = (line + "\n" for line in lines)
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE) if tsv else \
        csv.reader(lines)
    rows = []
    try:
        header = fieldnames or next(reader)
        for record in reader:
            if len(record) > len(header):
                raise DataError(
                    f"{path}:{reader.line_num}: {len(record)} fields, but the "
                    f"{'header' if fieldnames is None else 'column list'} has {len(header)}"
                    + (" (a tab inside a text?); remove tabs from texts, TSV has no quoting."
                       if tsv else "; quote fields that contain commas."))
            if record:  # too few fields leave the last columns missing
                rows.append((reader.line_num, dict(zip(header, record))))
    except csv.Error as error:
        raise DataError(f"{path}:{reader.line_num}: {error}.") from None
    return rows
