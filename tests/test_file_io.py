"""bert_tf.file_io: local paths through Python, others through tf.io.gfile, the same answers."""

import gzip
import io
import os
import uuid

import pytest

from bert_tf import file_io
from bert_tf.errors import CheckpointError


@pytest.fixture(params=["local", "ram"])
def root(request, tmp_path):
    """A new folder: on disk, or on TensorFlow's in-memory filesystem (a gfile-only scheme)."""
    if request.param == "local":
        return str(tmp_path / "root")
    return f"ram://file_io_{uuid.uuid4().hex}/root"


def test_write_read_list_glob_and_refuse(root):
    assert not file_io.exists(root)
    file_io.refuse_existing(root)  # absent: fine
    file_io.makedirs(os.path.join(root, "sub"))
    file_io.makedirs(os.path.join(root, "sub"))  # existing: fine
    file_io.refuse_existing(os.path.join(root, "sub"))  # an empty folder: fine
    text = "caf\u00e9\r\nline two\n"
    with file_io.open_file(os.path.join(root, "a.txt"), "w") as f:
        f.write(text)
    with file_io.open_file(os.path.join(root, "a.txt"), "rb") as f:
        assert f.read() == text.encode("utf-8")  # UTF-8, "\r\n" kept as written
    with file_io.open_file(os.path.join(root, "a.txt")) as f:
        assert f.read() == text
    with file_io.open_file(os.path.join(root, "b.gz"), "wb") as f:
        f.write(gzip.compress(b"zipped\n"))
    with gzip.GzipFile(fileobj=file_io.open_file(os.path.join(root, "b.gz"), "rb")) as f:
        assert f.read() == b"zipped\n"
    assert sorted(file_io.listdir(root)) == ["a.txt", "b.gz", "sub"]
    assert file_io.isdir(os.path.join(root, "sub"))
    assert not file_io.isdir(os.path.join(root, "a.txt"))
    assert file_io.glob(os.path.join(root, "*.txt")) == [os.path.join(root, "a.txt")]
    assert file_io.glob(os.path.join(root, "*.none")) == []
    with pytest.raises(file_io.OutputExistsError, match="--out=.*a.txt: the output file already"):
        file_io.refuse_existing(os.path.join(root, "a.txt"), "output file", flag="out")
    with pytest.raises(file_io.OutputExistsError, match="already exists"):
        file_io.refuse_existing(root)  # a folder with files


def test_refuse_existing_names_the_flag(tmp_path):
    file_io.refuse_existing(str(tmp_path / "absent"))
    file_io.refuse_existing(str(tmp_path))  # an empty folder is fine
    (tmp_path / "file").write_text("x")
    with pytest.raises(file_io.OutputExistsError,
                       match=r"--output_dir=.*already exists; nothing was"):
        file_io.refuse_existing(str(tmp_path), flag="output_dir")
    assert isinstance(file_io.OutputExistsError("x"), FileExistsError)


@pytest.mark.parametrize("data", [b"", b"a", b"a\n", b"\n\n", b"a\r\nb\rc\n\nd", b"x" * 70_000
                                  + b"\ny"])
def test_bounded_lines_under_the_limit_are_the_lines(data):
    lines = list(file_io.bounded_lines(io.BytesIO(data), max_bytes=1 << 20, chunk_bytes=7))
    expected = [line.removesuffix(b"\r") for line in data.split(b"\n")]
    assert lines == [(line, False) for line in (expected[:-1] if not expected[-1] else expected)]


@pytest.mark.parametrize("chunk_bytes", [1, 3, 64])
def test_bounded_lines_cut_long_lines_at_a_character(chunk_bytes):
    data = "aé€😀".encode() * 4 + b"\nok\n" + b"z" * 50
    lines = file_io.bounded_lines(io.BytesIO(data), max_bytes=12, chunk_bytes=chunk_bytes)
    assert [(line.decode(), cut) for line, cut in lines] == [
        ("aé€😀a", True), ("ok", False), ("z" * 12, True)]


def test_read_json_refuses_deep_large_and_odd_files(tmp_path):
    deep = tmp_path / "config.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=rf"^{deep}: JSON nested deeper than 100 levels"):
        file_io.read_json(str(deep), ValueError)
    deep.write_text('{"a": ' * 60 + "1" + "}" * 60)
    with pytest.raises(ValueError, match="nested deeper than 50 levels"):
        file_io.parse_json(deep.read_text(), str(deep), ValueError, max_depth=50)
    assert file_io.parse_json(deep.read_text(), str(deep), ValueError, max_depth=60)
    with pytest.raises(ValueError, match=rf"^{deep}: over 0 MB; not a config file"):
        file_io.read_json(str(deep), ValueError, max_bytes=100)
    deep.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ValueError, match=rf"^{deep}: not a JSON file \(not UTF-8"):
        file_io.read_json(str(deep), ValueError)
    with pytest.raises(ValueError, match=rf"^{tmp_path} is a folder, not a regular file"):
        file_io.read_json(str(tmp_path), ValueError)
    with pytest.raises(ValueError, match=r"^/dev/null is a device, not a regular file"):
        file_io.read_json("/dev/null", ValueError)


def test_read_json_object_refuses_deep_nesting_as_a_checkpoint_error(tmp_path):
    path = tmp_path / "modules.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CheckpointError, match=rf"^{path}: JSON nested deeper than 100 levels"):
        file_io.read_json_object(str(path))
    path.write_text("[]")
    with pytest.raises(CheckpointError, match=r"expected a JSON object, got list"):
        file_io.read_json_object(str(path))
