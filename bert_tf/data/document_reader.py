"""Streams documents from text files in the pretraining input format.

The format is google-research/bert's: one sentence per line, a blank line
between documents. Files may be gzip compressed (name ending in `.gz`) and live
on any filesystem `tf.io.gfile` reads. Documents are yielded one at a time, so a
corpus never has to fit in memory.
"""

import dataclasses
import gzip

from absl import logging

from bert_tf import file_io
from bert_tf.errors import UserError


class InputError(UserError, ValueError):
    """The input text files cannot be used; the message names file and line."""


@dataclasses.dataclass
class Document:
    """One document: its sentences and where it starts (`file`, 1-based `line`)."""

    file: str
    line: int
    sentences: list


def expand_input_patterns(patterns):
    """Expands globs and comma-separated lists into a sorted list of files.

    Args:
      patterns: a `str` of comma-separated globs (google-research's
        `--input_file`), or a list of such strings.

    Returns:
      A sorted list of distinct file paths.

    Raises:
      InputError: if a pattern matches no file.
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    files = set()
    for pattern in (p.strip() for group in patterns for p in group.split(",")):
        if not pattern:
            continue
        matches = file_io.glob(pattern)
        if not matches:
            raise InputError(f"input pattern {pattern!r} matches no file")
        files.update(matches)
    if not files:
        raise InputError(f"no input files given: {patterns!r}")
    return sorted(files)


def _open_lines(path):
    raw = file_io.open_file(path, "rb")
    return gzip.GzipFile(fileobj=raw, mode="rb") if path.endswith(".gz") else raw


_NAMED_BAD_LINES = 10  # Bad lines named one by one per file; the rest are only counted.


def _decode(raw_line, path, number, skipped):
    """Returns the stripped line, or None for undecodable lines (named while `skipped` is small)."""
    try:
        line = raw_line.decode("utf-8")
    except UnicodeDecodeError as error:
        if skipped < _NAMED_BAD_LINES:
            logging.warning("%s:%d: skipping line that is not UTF-8 (%s)", path, number, error)
        return None
    if "\x00" in line:
        if skipped < _NAMED_BAD_LINES:
            logging.warning("%s:%d: skipping binary line (contains NUL bytes)", path, number)
        return None
    return line.strip()


def read_documents(files, max_document_sentences=10000):
    """Yields the documents of `files` in order.

    Lines that are not valid UTF-8 or contain NUL bytes are skipped with a
    warning naming file and line (the first 10 of each file), and a count per
    file. A document that grows beyond `max_document_sentences` (typically a
    file without blank lines) is cut into pieces of that many sentences, with a
    warning: every piece must fit in memory, and NotNext pairs need more than
    one document.

    Args:
      files: list of paths (see `expand_input_patterns`).
      max_document_sentences: positive int, the most sentences per document.

    Yields:
      `Document`s with at least one sentence.

    Raises:
      InputError: if a gzip file is corrupt (naming the file).
    """
    for path in files:
        sentences, start, cut = [], 1, False
        number, skipped = 0, 0
        try:
            with _open_lines(path) as lines:
                for number, raw_line in enumerate(lines, 1):
                    line = _decode(raw_line, path, number, skipped)
                    if line is None:
                        skipped += 1
                        continue
                    if line:
                        if not sentences:
                            start = number
                        sentences.append(line)
                    if sentences and (not line or len(sentences) >= max_document_sentences):
                        if line:
                            cut = True
                        yield Document(path, start, sentences)
                        sentences = []
        except (OSError, EOFError, gzip.BadGzipFile) as error:
            raise InputError(f"{path}: cannot read line {number + 1}: {error}") from error
        if sentences:
            yield Document(path, start, sentences)
        if number == 0:
            logging.warning("%s: input file is empty", path)
        if skipped:
            logging.warning("%s: skipped %d line(s) that are not UTF-8 text (the first ones are "
                            "named above)", path, skipped)
        if cut:
            logging.warning(
                "%s: documents longer than %d sentences were cut into pieces; is the blank line "
                "between documents missing?", path, max_document_sentences)
