"""bert_tf.file_io: local paths through Python, others through tf.io.gfile, the same answers."""

import gzip
import os
import uuid

import pytest

from bert_tf import file_io


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
    with pytest.raises(file_io.OutputExistsError, match=r"--output_dir=.*already exists; nothing was"):
        file_io.refuse_existing(str(tmp_path), flag="output_dir")
    assert isinstance(file_io.OutputExistsError("x"), FileExistsError)
