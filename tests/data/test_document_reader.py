"""Streaming documents from text files: globs, gzip, blank lines, bad lines."""

import gzip
import logging

import pytest

from bert_tf.data import document_reader


def _write(path, data):
    path.write_bytes(data)
    return str(path)


def test_documents_globs_comma_lists_and_gzip(tmp_path):
    a = _write(tmp_path / "a.txt", b"one.\ntwo.\n\n\nthree.\n")
    with gzip.open(tmp_path / "b.txt.gz", "wb") as f:
        f.write(b"four.\n\nfive.\nsix.")
    files = document_reader.expand_input_patterns(f"{tmp_path}/*.gz, {a}")
    assert files == [a, str(tmp_path / "b.txt.gz")]
    documents = list(document_reader.read_documents(files))
    assert [d.sentences for d in documents] == [["one.", "two."], ["three."], ["four."],
                                                ["five.", "six."]]
    assert [(d.file, d.line) for d in documents][1:3] == [(a, 5), (files[1], 1)]


def test_missing_pattern_names_it(tmp_path):
    with pytest.raises(document_reader.InputError, match="nothing-here"):
        document_reader.expand_input_patterns(f"{tmp_path}/nothing-here*")


def test_bad_lines_skipped_with_file_and_line(tmp_path, caplog):
    path = _write(tmp_path / "bad.txt", b"good one.\n\xff\xfe broken\nnul \x00 byte\ngood two.\n")
    with caplog.at_level(logging.WARNING):
        documents = list(document_reader.read_documents([path]))
    assert [d.sentences for d in documents] == [["good one.", "good two."]]
    assert f"{path}:2: skipping line that is not UTF-8" in caplog.text
    assert f"{path}:3: skipping binary line" in caplog.text


def test_the_first_ten_bad_lines_of_every_file_are_named(tmp_path, caplog):
    paths = [_write(tmp_path / f"bad{i}.txt", b"good.\n" + b"\xff\n" * 12) for i in range(2)]
    with caplog.at_level(logging.WARNING):
        list(document_reader.read_documents(paths))
    for path in paths:
        named = [line for line in caplog.text.splitlines() if f"{path}:" in line
                 and "skipping line" in line]
        assert len(named) == 10 and f"{path}:11:" in named[-1]  # lines 2 to 11
        assert f"{path}: skipped 12 line(s)" in caplog.text


def test_empty_file_warns(tmp_path, caplog):
    path = _write(tmp_path / "empty.txt", b"")
    with caplog.at_level(logging.WARNING):
        assert list(document_reader.read_documents([path])) == []
    assert f"{path}: input file is empty" in caplog.text


def test_file_without_blank_lines_is_cut(tmp_path, caplog):
    path = _write(tmp_path / "one.txt", b"".join(b"sentence %d.\n" % i for i in range(25)))
    with caplog.at_level(logging.WARNING):
        documents = list(document_reader.read_documents([path], max_document_sentences=10))
    assert [len(d.sentences) for d in documents] == [10, 10, 5]
    assert "is the blank line between documents missing?" in caplog.text


def test_corrupt_gzip_names_file(tmp_path):
    path = _write(tmp_path / "corrupt.txt.gz", b"this is not gzip data")
    with pytest.raises(document_reader.InputError, match="corrupt.txt.gz"):
        list(document_reader.read_documents([path]))
