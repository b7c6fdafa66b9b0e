"""The few `tf.io.gfile` calls of text-only code, without importing TensorFlow for local paths.

Tools that only read and write text (`tools/prepare_corpus.py`, `tools/prepare_text_folders.py`)
and the readers under them (`finetuning/table_reader.py`, `data/document_reader.py`) accept a path
on any filesystem `tf.io.gfile` reads (`gs://`, `hdfs://`, `ram://`). Importing TensorFlow for
that costs ~4 s of CPU per process, more than such a tool's whole run, so a local path goes
through Python's own `os`, `glob` and `open` (which gfile itself calls for local files) and
TensorFlow is imported only for a path with a filesystem scheme. Local and remote calls behave
alike: binary reads, text read and written as UTF-8 without newline translation, as `GFile` does.

Example:
>>> from bert_tf import file_io
>>> file_io.exists("/no/such/file")
False
"""

import glob as glob_lib
import json
import os

from bert_tf.errors import UserError


class OutputExistsError(UserError, FileExistsError):
    """An output path already exists; nothing was written, nothing is overwritten."""


def _gfile(path):
    """`tf.io.gfile` for a path with a filesystem scheme (`gs://...`), None for a local path."""
    if "://" not in path:
        return None
    import tensorflow as tf  # only here: local paths never need TensorFlow's import
    return tf.io.gfile


def exists(path):
    """Whether `path` (a file or a folder) exists."""
    gfile = _gfile(path)
    return gfile.exists(path) if gfile else os.path.exists(path)


def isdir(path):
    """Whether `path` is a folder."""
    gfile = _gfile(path)
    return gfile.isdir(path) if gfile else os.path.isdir(path)


def listdir(path):
    """The names in folder `path`."""
    gfile = _gfile(path)
    return gfile.listdir(path) if gfile else os.listdir(path)


def glob(pattern):
    """The paths matching `pattern` (`*`, `?`, `[...]`; a plain path matches itself if it exists)."""
    gfile = _gfile(pattern)
    return gfile.glob(pattern) if gfile else glob_lib.glob(pattern)


def makedirs(path):
    """Creates folder `path` and its parents; an existing folder is fine."""
    gfile = _gfile(path)
    if gfile:
        gfile.makedirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def open_file(path, mode="r"):
    """`path` opened in `mode` (`r`, `w`, `a`, with `b` for bytes); text is UTF-8, as is."""
    gfile = _gfile(path)
    if gfile:
        return gfile.GFile(path, mode)
    if "b" in mode:
        return open(path, mode)
    return open(path, mode, encoding="utf-8", newline="")


def json_line_object(line, where, error_class, needs=""):
    """The JSON object on `line`; anything else raises `error_class` naming `where` (file:line).

    One parser for every JSON-lines reader (fine-tuning tables, corpus inference), so each
    refuses a bad line with the same words. `needs` says what the object must hold.

    Example:
    >>> json_line_object('{"text": "hi"}', "a.jsonl:1", ValueError)
    {'text': 'hi'}
    """
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise error_class(f"{where}: not valid JSON ({error.msg} at column {error.colno})"
                          ) from None
    if not isinstance(value, dict):
        raise error_class(f"{where}: a JSON line must be an object{needs}; it is a "
                          f"{type(value).__name__}")
    return value


def refuse_existing(path, what="output", flag=None):
    """Raises `OutputExistsError` if `path` exists (a folder counts only when not empty).

    Entry points call it before any work, so a refused run leaves every old file as it was.
    """
    if isdir(path) and not listdir(path):
        return
    if exists(path):
        named = f"--{flag}={path}" if flag else path
        raise OutputExistsError(f"{named}: the {what} already exists; nothing was written. "
                                "Choose a new path or remove the old one.")
