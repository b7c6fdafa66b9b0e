"""Fixtures of the tools' tests: unusable model directories, and `run_tool` for tools/<name>.py."""

import glob
import os
import shutil

import numpy as np
import pytest

from tests.entry_points import assert_user_error, run_entry_point, snapshot  # noqa: F401
from tests.fixtures import write_tiny_model_dir


def run_tool(name, *args, **kwargs):
    """Runs `tools/<name>.py` in a fresh interpreter (`run_entry_point`'s keywords)."""
    return run_entry_point(f"tools/{name}.py", *args, **kwargs)


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
    from bert_tf.checkpoints.model_dir import read_config, write_model_dir

    model_dir = str(tmp_path_factory.mktemp("nan_model") / "model")
    encoder = write_tiny_model_dir(model_dir)
    encoder.pooler.bias.assign(np.full(encoder.pooler.bias.shape, np.nan, np.float32))
    write_model_dir(model_dir, read_config(model_dir), encoder=encoder)
    return model_dir
