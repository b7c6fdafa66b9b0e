"""Whole-program runs of tools/*.py: a subprocess per command, as a user runs it."""

import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.model_dir import write_model_dir
from bert_tf.models.bert_encoder import BertEncoder
from tests.export.conftest import TINY_VOCAB, tiny_config, write_tiny_model_dir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_tool(name, *args, timeout=600, env=None):
    """Runs `tools/<name>.py` with `args` in a fresh interpreter; returns the CompletedProcess.

    `env`: variables set beside the test's environment.
    """
    return subprocess.run([sys.executable, os.path.join(REPO, "tools", f"{name}.py"), *args],
                          capture_output=True, text=True, cwd=REPO, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="",
                                   **(env or {})))


def snapshot(root):
    """`{relative path: bytes}` of every file under `root` (a file or a folder)."""
    if os.path.isfile(root):
        with open(root, "rb") as f:
            return {"": f.read()}
    files = {}
    for path in glob.glob(os.path.join(root, "**"), recursive=True, include_hidden=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


def assert_user_error(result, *fragments):
    """A non-zero exit with one `prog: error: ...` line naming every fragment, no traceback."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr[-3000:])


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """An encoder-only model directory with the tiny cased vocab; model_info says cased."""
    model_dir = str(tmp_path_factory.mktemp("tiny_tool_model") / "model")
    write_tiny_model_dir(model_dir, "encoder")
    return model_dir


@pytest.fixture
def damaged_model_dir(tiny_model_dir, tmp_path):
    """A copy of `tiny_model_dir` whose checkpoint data file was cut in half (a killed write)."""
    model_dir = str(tmp_path / "damaged")
    shutil.copytree(tiny_model_dir, model_dir)
    (data,) = glob.glob(os.path.join(model_dir, "model.ckpt.data-*"))
    with open(data, "rb") as f:
        content = f.read()
    with open(data, "wb") as f:
        f.write(content[:len(content) // 2])
    return model_dir


@pytest.fixture(scope="session")
def nan_model_dir(tmp_path_factory):
    """A model directory whose pooler bias holds NaN (e.g. saved after training diverged)."""
    model_dir = str(tmp_path_factory.mktemp("nan_model") / "model")
    encoder = BertEncoder(tiny_config())
    encoder.pooler.bias.assign(np.full(encoder.pooler.bias.shape, np.nan, np.float32))
    write_model_dir(model_dir, tiny_config(), vocab_file=TINY_VOCAB,
                    info={"head": "encoder", "do_lower_case": False}, encoder=encoder)
    return model_dir


def assert_helpshort(name, *flag_names):
    """`--helpshort` prints the tool's flags (absl then exits 1) and no traceback."""
    result = run_tool(name, "--helpshort")
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for flag_name in flag_names:
        assert f"--{flag_name}" in result.stdout, result.stdout
