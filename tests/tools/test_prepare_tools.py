"""tools/prepare_corpus.py and tools/prepare_text_folders.py as a user runs them."""

import gzip

import pytest

from tests.entry_points import assert_user_error, snapshot
from tests.tools.conftest import run_tool


def assert_tensorflow_never_imported(result):
    """Neither tool needs TensorFlow for local files (bert_tf.file_io; cli's import is lazy).

    `result` comes from a run with PYTHONPROFILEIMPORTTIME=1: every import is on stderr.
    """
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")]
    assert "bert_tf.cli" in imported and "absl.flags" in imported, result.stderr[-3000:]
    assert not [name for name in imported if name.split(".")[0] in ("tensorflow", "keras")]


IMPORT_TIMES = {"PYTHONPROFILEIMPORTTIME": "1"}


def test_prepare_corpus_good_run(tmp_path):
    source = tmp_path / "raw.txt"
    source.write_text("First doc. It has two sentences.\n\nSecond doc\u2028still one line.\n")
    result = run_tool("prepare_corpus", f"--input_file={source}", f"--output_dir={tmp_path}",
                      "--heldout_every=2", env=IMPORT_TIMES)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_tensorflow_never_imported(result)
    with gzip.open(tmp_path / "train.txt.gz", "rt", encoding="utf-8") as f:
        assert f.read() == "First doc.\nIt has two sentences.\n"


@pytest.mark.parametrize("content, flags, fragments", [
    (b"ok line\ncaf\xe9\n", [], ["raw.txt:2", "not valid UTF-8"]),
    (b"Ge1:1 In the beginning\nnot a verse\n", ["--input_format=kjv"], ["raw.txt:2", "verse"]),
    (b"Some text.\n", ["--heldout_every=0"], ["--heldout_every"]),
    (b"Some text.\n", ["--heldout_every=1"], ["no training document"]),
])
def test_prepare_corpus_bad_inputs(tmp_path, content, flags, fragments):
    (tmp_path / "raw.txt").write_bytes(content)
    result = run_tool("prepare_corpus", f"--input_file={tmp_path / 'raw.txt'}",
                      f"--output_dir={tmp_path / 'out'}", *flags)
    assert_user_error(result, *fragments)
    assert not (tmp_path / "out").exists()


def test_prepare_corpus_keeps_existing_outputs(tmp_path):
    (tmp_path / "raw.txt").write_text("Some text.\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "heldout.txt.gz").write_bytes(b"old")
    before = snapshot(str(tmp_path / "out"))
    result = run_tool("prepare_corpus", f"--input_file={tmp_path / 'raw.txt'}",
                      f"--output_dir={tmp_path / 'out'}")
    assert_user_error(result, "heldout.txt.gz", "already exists")
    assert snapshot(str(tmp_path / "out")) == before
    assert_user_error(run_tool("prepare_corpus", f"--input_file={tmp_path / 'nope.txt'}",
                               f"--output_dir={tmp_path / 'o2'}"), "nope.txt")


def test_prepare_text_folders(tmp_path):
    for label in ("a", "b"):
        (tmp_path / "in" / label).mkdir(parents=True)
        (tmp_path / "in" / label / "1.txt").write_text(f"text of {label}")
    result = run_tool("prepare_text_folders", f"--input_dir={tmp_path / 'in'}",
                      f"--output_dir={tmp_path / 'out'}", "--dev_fraction=0.5", env=IMPORT_TIMES)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_tensorflow_never_imported(result)
    before = snapshot(str(tmp_path / "out"))
    rerun = run_tool("prepare_text_folders", f"--input_dir={tmp_path / 'in'}",
                     f"--output_dir={tmp_path / 'out'}")
    assert_user_error(rerun, "train.jsonl", "already exists")
    assert snapshot(str(tmp_path / "out")) == before
    assert_user_error(run_tool("prepare_text_folders", f"--input_dir={tmp_path / 'none'}",
                               f"--output_dir={tmp_path / 'o'}"), str(tmp_path / "none"))
    assert_user_error(run_tool("prepare_text_folders", f"--input_dir={tmp_path / 'in'}",
                               f"--output_dir={tmp_path / 'o'}", "--dev_fraction=2"),
                      "--dev_fraction")
