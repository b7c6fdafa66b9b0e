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
import stat

from bert_tf.errors import CheckpointError, UserError


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
    """The paths matching `pattern` (`*`, `?`, `[...]`; a plain path matches itself if it
    exists)."""
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
    value = parse_json(line, where, error_class)
    if not isinstance(value, dict):
        raise error_class(f"{where}: a JSON line must be an object{needs}; it is a "
                          f"{type(value).__name__}")
    return value


def read_json_object(path):
    """The JSON object in the file at `path` (checkpoint folders hold untrusted files).

    Raises:
      CheckpointError: not a regular file, over `MAX_JSON_BYTES`, not UTF-8 JSON, nested past
        `MAX_JSON_DEPTH`, or not an object; the message names the file.
    """
    value = read_json(path, CheckpointError)
    if not isinstance(value, dict):
        raise CheckpointError(f"{path}: expected a JSON object, got {type(value).__name__}.")
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


# A JSON file or line nested deeper than this is refused: the configs read here nest at most
# ~10 levels (a `.keras` config), and Python's parser recurses once per level.
MAX_JSON_DEPTH = 100
# A config-like JSON file larger than this is refused before it is read (the largest real
# ones, tokenizer.json of a 250,000-word vocabulary, hold ~20 MB).
MAX_JSON_BYTES = 256 << 20


def parse_json(text, where, error_class, max_depth=MAX_JSON_DEPTH):
    """The JSON value of `text`; bad JSON or nesting past `max_depth` raises `error_class`.

    Example:
    >>> parse_json('{"a": [1]}', "x.json", ValueError)
    {'a': [1]}
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno} column" if error.lineno > 1 else "column"
        raise error_class(f"{where}: not valid JSON ({error.msg} at {at} {error.colno})"
                          ) from None
    except RecursionError:
        value = None
    depth = _json_depth(value, max_depth) if value is not None else max_depth + 1
    if depth > max_depth:
        raise error_class(f"{where}: JSON nested deeper than {max_depth} levels; "
                          "no file this package reads nests so deep") from None
    return value


def _json_depth(value, limit):
    """The nesting depth of a parsed JSON value, counted up to `limit + 1` (no recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= limit:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_regular_file(path, error_class):
    """Raises `error_class` unless local `path` is a regular file (a FIFO would block a read)."""
    if _gfile(path):
        return
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise error_class(f"{path}: cannot read it ({error.strerror})") from None
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
        raise error_class(f"{path} is {kind}, not a regular file; give a file")


def read_json(path, error_class, max_bytes=MAX_JSON_BYTES):
    """The JSON value in the file at `path`, which may come from anyone: size and depth bounded.

    Raises:
      error_class: not a regular file, over `max_bytes`, not UTF-8, not JSON, or nested past
        `MAX_JSON_DEPTH`; the message names the file.
    """
    check_regular_file(path, error_class)
    with open_file(path, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error_class(f"{path}: over {max_bytes >> 20} MB; not a config file (a damaged "
                          "or wrong file?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise error_class(f"{path}: not a JSON file (not UTF-8: {error.reason} at byte "
                          f"{error.start})") from None
    return parse_json(text, path, error_class)


def bounded_lines(f, max_bytes, chunk_bytes=1 << 16):
    r"""Yields `(line, cut)` for each line of binary file `f`, in at most ~`max_bytes` of memory.

    A line loses its "\n" (and a "\r" before it). One longer than `max_bytes` is cut there, at
    a UTF-8 character boundary, and the rest of it skipped unread into memory (`cut` is True):
    a small `.gz` may hold a line of gigabytes.

    Example:
    >>> import io
    >>> list(bounded_lines(io.BytesIO(b"ab\ncdef\n"), 2))
    [(b'ab', False), (b'cd', True)]
    """
    parts, size, cut = [], 0, False
    while chunk := f.read(chunk_bytes):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not cut:
                parts.append(chunk[start:end])
            yield _line_of(parts, max_bytes, cut or size + end - start > max_bytes)
            parts, size, cut, start = [], 0, False, end + 1
        if not cut:
            parts.append(chunk[start:])
            size += len(chunk) - start
            if size > max_bytes:
                parts, size, cut = [b"".join(parts)[:max_bytes + 1]], max_bytes + 1, True
    if parts and (cut or size):
        yield _line_of(parts, max_bytes, cut)


def _line_of(parts, max_bytes, cut):
    line = b"".join(parts)
    if not cut:
        return line.removesuffix(b"\r"), False
    return _whole_characters(line[:max_bytes]), True


def _whole_characters(line):
    """`line` without the first bytes of a UTF-8 character cut in two at its end."""
    for back in range(1, min(4, len(line)) + 1):
        byte = line[-back]
        if byte & 0xC0 != 0x80:  # ASCII or the lead byte of a character
            length = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return line[:-back] if length > back else line
    return line
