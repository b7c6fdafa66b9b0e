"""tools/create_pretraining_data.py end to end: flags in, google-research records out."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from tests.data.conftest import HELDOUT, VOCAB
from tests.entry_points import call_entry_point

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# What these tests assert is the console of a new process (Beam's workers, TensorFlow's start-up).
pytestmark = pytest.mark.subprocess


def _tool(*flags, pythonpath=ROOT, quiet_tensorflow=False):
    """Runs the tool; `quiet_tensorflow` leaves TensorFlow's start-up lines to the tool, as a user's
    shell does."""
    env = dict(os.environ, PYTHONPATH=pythonpath, TF_CPP_MIN_LOG_LEVEL="2")
    if quiet_tensorflow:
        del env["TF_CPP_MIN_LOG_LEVEL"]
    return subprocess.run([sys.executable,
                           os.path.join(ROOT, "tools", "create_pretraining_data.py"), *flags],
                          capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_cli_writes_google_research_records(tmp_path):
    flags = [f"--input_file={HELDOUT}", f"--output_file={tmp_path}/out", f"--vocab_file={VOCAB}",
             "--num_output_shards=2", "--dupe_factor=1", "--max_seq_length=64",
             "--max_predictions_per_seq=10", "--do_whole_word_mask", "--random_seed=3",
             "--beam_pipeline_options=runner=DirectRunner"]
    result = _tool(*flags)
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr and "instances from 59 documents" in result.stderr
    files = sorted(os.listdir(tmp_path))
    assert files == ["out-00000-of-00002", "out-00001-of-00002"]
    record = next(iter(tf.data.TFRecordDataset(str(tmp_path / files[0]))))
    features = tf.train.Example.FromString(record.numpy()).features.feature
    assert len(features["input_ids"].int64_list.value) == 64
    assert len(features["masked_lm_ids"].int64_list.value) == 10
    # A second run into the same files is refused with one line, not a stack trace (in this
    # process: the console of the tool's refusals in a new interpreter is the tests below).
    again = call_entry_point("tools/create_pretraining_data.py", *flags)
    assert again.returncode == 1 and "out-00000-of-00002 exists: delete it" in again.stderr
    assert "Traceback" not in again.stderr


def test_cli_without_beam_names_the_extra(tmp_path):
    # A stand-in apache_beam package that fails to import, as when Beam is not installed.
    (tmp_path / "apache_beam").mkdir()
    (tmp_path / "apache_beam" / "__init__.py").write_text("raise ImportError('No module named "
                                                          "apache_beam')\n")
    result = _tool(f"--input_file={HELDOUT}", f"--output_file={tmp_path}/out",
                   f"--vocab_file={VOCAB}", pythonpath=f"{tmp_path}{os.pathsep}{ROOT}")
    assert result.returncode == 1, result.stderr
    assert "pip install 'bert_tf[beam]'" in result.stderr and "Traceback" not in result.stderr
    assert not os.path.exists(f"{tmp_path}/out")


def _console_lines(stderr):
    """stderr without the tool's own progress lines (absl's `I... create_pretraining_data.py:N]
    ...`)."""
    return [line for line in stderr.splitlines() if "create_pretraining_data.py:" not in line]


@pytest.mark.slow
def test_bad_input_found_by_a_worker_process_is_one_line(tmp_path):
    # Found inside the pipeline, not by the checks before it: the second file is not gzip. Beam's
    # worker processes print the exception's trace (and TensorFlow's start-up lines); none reach
    # the user. (In-process runs: test_one_document_with_word_pieces_is_one_line.)
    (tmp_path / "a.txt").write_text("First document.\n\nSecond document.\n")
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    result = _tool(
        f"--input_file={tmp_path}/a.txt,{tmp_path}/b.txt.gz",
        f"--output_file={tmp_path}/out/r",
        f"--vocab_file={VOCAB}",
        "--beam_pipeline_options=direct_num_workers=2,direct_running_mode=multi_processing",
        quiet_tensorflow=True,
    )
    assert result.returncode == 1
    assert _console_lines(result.stderr) == ["create_pretraining_data: error: "
                                             f"{tmp_path}/b.txt.gz: cannot read line 1: Not a "
                                             "gzipped file (b'no')"]
    assert not os.path.exists(f"{tmp_path}/out") or os.listdir(f"{tmp_path}/out") == []


def test_one_document_with_word_pieces_is_one_line(tmp_path):
    # Two documents are read, but one has no WordPieces (control characters only): no NotNext pair.
    (tmp_path / "a.txt").write_text("A real sentence.\n\n\x01\x02\n")
    result = _tool(f"--input_file={tmp_path}/a.txt", f"--output_file={tmp_path}/r",
                   f"--vocab_file={VOCAB}", quiet_tensorflow=True)
    assert result.returncode == 1
    assert _console_lines(result.stderr) == ["create_pretraining_data: error: a NotNext bucket "
                                             "holds 1 document(s) with WordPieces; NotNext pairs "
                                             "need two: give more documents (separated by a blank "
                                             "line) or raise --documents_per_bucket"]
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]
