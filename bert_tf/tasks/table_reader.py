"""Rows of TSV, CSV and JSONL files as dicts, each with the line it came from.

TSV is read without quote processing (GLUE's files contain unbalanced quotes; google-research
reads them with `quotechar=None` too); CSV uses standard quoting; JSONL has one JSON object a line.
"""

import csv
import json
import os

import tensorflow as tf

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


def read_rows(path, columns=None, fieldnames=None):
    """Reads `path` into a list of `(line_number, row_dict)`.

    Args:
      path: a `.tsv`, `.csv` or `.jsonl` file (any filesystem tf.io.gfile reads).
      columns: names that every row must have; a missing one raises `DataError` naming it.
      fieldnames: column names for a TSV/CSV file without a header line (CoLA's train/dev).

    Raises:
      DataError: the file is missing or empty, a row lacks a column, or a JSONL line is not an
        object; the message gives the file and line.
    """
    if not tf.io.gfile.exists(path):
        raise DataError(f"Data file not found: {path}")
    with tf.io.gfile.GFile(path, "r") as f:
        text = f.read()
    if not text.strip():
        raise DataError(f"{path} is empty: no header and no examples.")
    lines = text.splitlines()
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
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"{path}:{number}: not valid JSON ({error.msg}).") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, found "
                            f"{type(row).__name__}.")
        rows.append((number, row))
    return rows


def _delimited_rows(path, lines, fieldnames):
    if file_format(path) == "tsv":
        reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(lines)
    if fieldnames is None:
        fieldnames = next(reader)
    rows = []
    for record in reader:
        if record:
            # Extra trailing fields are ignored; too few leave the last columns missing.
            rows.append((reader.line_num, dict(zip(fieldnames, record))))
    return rows
