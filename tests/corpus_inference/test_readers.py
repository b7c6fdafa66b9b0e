"""Corpus lines from text, JSON lines and Parquet: ids, skipped lines counted, bad input named."""

import gzip
import json
import os

import pytest

from bert_tf.corpus_inference.readers import Line, LineReader
from bert_tf.data.document_reader import InputError

parquet = pytest.importorskip("pyarrow.parquet", reason="pyarrow comes with apache-beam")


def test_text_lines_get_file_and_line_ids_and_skips_are_counted(tmp_path):
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress(b"First line.\n\n  \nBad \xff byte.\nNUL \x00 here\nLast.\r\n"))
    reader = LineReader()
    lines = list(reader.lines(str(path), file_index=3, name="corpus/a.txt.gz"))
    assert lines == [Line("corpus/a.txt.gz:1", "First line.", (3, 1)),
                     Line("corpus/a.txt.gz:6", "Last.", (3, 6))]
    assert reader.counts == {"empty_lines": 2, "undecodable_lines": 2}


def test_undecodable_line_is_fatal_when_asked_naming_file_and_line(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"Fine.\nBad \xff byte.\n")
    with pytest.raises(InputError, match=rf"^{path}:2: the line is not UTF-8 \(invalid start byte"):
        list(LineReader(undecodable="fail").lines(str(path)))


def test_json_lines_read_the_text_and_id_columns(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": 4, "body": "Four."}\n\n{"id": "x", "body": ""}\n'
                    '{"id": 5, "body": "Five."}\n')
    reader = LineReader(text_column="body", id_column="id")
    assert [(line.id, line.text) for line in reader.lines(str(path))] == [(4, "Four."),
                                                                          (5, "Five.")]
    assert reader.counts == {"empty_lines": 2}


@pytest.mark.parametrize("content, message", [
    ('{"text": "a"}\n{"body": "b"}\n', r":2: no column 'text' \(it has: body\)"),
    ('{"text": "a"\n', r":1: not valid JSON \(Expecting ',' delimiter at column 13\)"),
    ('["a"]\n', r":1: a JSON line must be an object .* it is a list"),
    ('{"text": 3}\n', r":1: column 'text' holds int, not text"),
])
def test_bad_json_lines_are_named(tmp_path, content, message):
    path = tmp_path / "in.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=f"^{path}{message}"):
        list(LineReader().lines(str(path)))


def test_a_bad_id_is_named(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"text": "a", "id": [1]}) + "\n")
    with pytest.raises(InputError,
                       match=r":1: column 'id' holds list; an id is a string or a number"):
        list(LineReader(id_column="id").lines(str(path)))


def test_parquet_rows_and_a_missing_column(tmp_path):
    import pyarrow

    path = str(tmp_path / "in.parquet")
    parquet.write_table(pyarrow.table({"body": ["One.", None, "Three."], "n": [1, 2, 3]}), path)
    reader = LineReader(text_column="body", id_column="n")
    assert [(line.id, line.text, line.order) for line in reader.lines(path)] == [
        (1, "One.", (0, 1)), (3, "Three.", (0, 3))]
    assert reader.counts == {"empty_lines": 1}
    with pytest.raises(InputError, match=rf"^{path}: no column 'text' \(it has: body, n\)"):
        list(LineReader().lines(path))


def test_a_long_line_is_cut_while_read_and_counted(tmp_path):
    path = tmp_path / "a.txt.gz"  # 200 KB of one line in a ~1 KB file
    path.write_bytes(gzip.compress(b"short\n" + "é".encode() * 100_000 + b"\nend\n"))
    reader = LineReader(max_line_bytes=1001)
    lines = list(reader.lines(str(path)))
    assert [line.text for line in lines] == ["short", "é" * 500, "end"]
    assert reader.counts == {"cut_lines": 1}


def test_a_json_line_over_the_limit_is_refused(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"text": "x" * 2000}) + "\n")
    with pytest.raises(InputError, match=rf"^{path}:1: a JSON line over 1000 bytes; split"):
        list(LineReader(max_line_bytes=1000).lines(str(path)))


def test_a_deeply_nested_json_line_is_one_error(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputError, match=rf"^{path}:1: JSON nested deeper than 100 levels"):
        list(LineReader().lines(str(path)))


def _damaged(data, how):
    return data[:len(data) // 2] if how == "truncated" else \
        data[:20] + bytes(b ^ 0x5A for b in data[20:40]) + data[40:]


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_gz_is_named(tmp_path, how):
    path = tmp_path / "a.txt.gz"
    text = "".join(f"line {i} of a corpus\n" for i in range(2000)).encode()
    path.write_bytes(_damaged(gzip.compress(text), how))
    with pytest.raises(InputError, match=rf"^{path}: cannot read line \d+: .*damaged or partly"):
        list(LineReader().lines(str(path)))


@pytest.mark.parametrize("how", ["truncated", "random"])
def test_a_damaged_parquet_file_is_named(tmp_path, how):
    import pyarrow

    path = tmp_path / "in.parquet"
    parquet.write_table(pyarrow.table({"text": [f"row {i}" for i in range(500)]}), str(path))
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2] if how == "truncated" else bytes(range(256)) * 4)
    with pytest.raises(InputError, match=rf"^{path}: cannot read it as Parquet \(a damaged"):
        list(LineReader().lines(str(path)))


def test_a_fifo_is_refused_without_waiting_on_it(tmp_path):
    path = tmp_path / "in.txt"
    os.mkfifo(path)
    with pytest.raises(InputError, match=rf"^{path} is a FIFO, not a regular file"):
        list(LineReader().lines(str(path)))
