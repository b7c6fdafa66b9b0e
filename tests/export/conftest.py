"""Shared export fixtures: a tiny classifier and MiniLM exported once, a fresh-process runner."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as text

from bert_tf.export.exporter import export_saved_model
from tests.fixtures import LABELS, TAGS, write_tiny_model_dir  # noqa: F401  (the export tests')

HERE = os.path.dirname(__file__)
TINY_SEQ_LENGTH = 24
# Raw-text inputs every export is checked on, bad ones included.
TEXTS = [
    b"Hello, world! BBC News reports on sport in Paris.",
    b"",
    b"   \t\n ",
    b"word " * 20000,  # 100,000 characters
    b"caf\xc3\xa9 \xff\xfe invalid UTF-8",
]


class RoundRobinModule(tf.Module):
    """A graph that packs two segments with tensorflow_text.RoundRobinTrimmer (TF Serving 2.20+)."""

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32),
                                  tf.RaggedTensorSpec([None, None], tf.int32)])
    def trim(self, a, b):
        trimmed = text.RoundRobinTrimmer(max_seq_length=8).trim([a, b])
        return {"a": trimmed[0].to_tensor(), "b": trimmed[1].to_tensor()}

    def signatures(self):
        return {"serving_default": self.trim.get_concrete_function()}


# The length of the task-head exports shared by test_padding.py and test_task_exports.py.
HEAD_SEQ_LENGTH = 48


@pytest.fixture(scope="session")
def tiny_head_export(tmp_path_factory):
    """`export(head, padding="longest", **kwargs)` -> `(model_dir, export path)`.

    One tiny random model per head (`write_tiny_model_dir`), exported at `HEAD_SEQ_LENGTH`
    once per (padding, kwargs) for the session: test_padding.py compares a head's "fixed"
    export with its "longest" one, test_task_exports.py that same "longest" export with the
    Keras model. Each test loads the export itself (`tf.saved_model.load`)."""
    root, model_dirs, exports = tmp_path_factory.mktemp("tiny_heads"), {}, {}

    def export(head, padding="longest", **kwargs):
        if head not in model_dirs:
            model_dirs[head] = str(root / head / "model")
            # The weights each test wrote first thing after its seeding, whichever asks first.
            keras.utils.set_random_seed(0)
            write_tiny_model_dir(model_dirs[head], head)
        key = (head, padding, tuple(sorted(kwargs.items())))
        if key not in exports:
            name = "_".join([padding] + [f"{k}={v}" for k, v in key[2]])
            exports[key] = export_saved_model(model_dirs[head], str(root / head / name), head,
                                              seq_length=HEAD_SEQ_LENGTH, padding=padding,
                                              **kwargs)
        return model_dirs[head], exports[key]

    return export


@pytest.fixture(scope="session")
def tiny_classifier(tmp_path_factory):
    """`(model_dir, export_path)` of a tiny classifier with label names, exported once."""
    root = tmp_path_factory.mktemp("tiny_classifier")
    model_dir = str(root / "model")
    write_tiny_model_dir(model_dir, "classifier")
    return model_dir, export_saved_model(model_dir, str(root / "export"), "classifier",
                                         seq_length=TINY_SEQ_LENGTH)


@pytest.fixture(scope="session")
def hub_exports(tmp_path_factory):
    """`(model_dir, {head: export path})`: a tiny encoder as TF Hub's two interfaces.

    Exported with `dtype="auto"`, which the hub interfaces take as float32 (on a CPU with
    native bfloat16 too): test_hub_modules.py checks the interfaces, test_precision.py the
    float32 each recorded, so the preprocessor (the costly trace) is exported once."""
    root = tmp_path_factory.mktemp("hub")
    model_dir = str(root / "model")
    write_tiny_model_dir(model_dir, "encoder")
    return model_dir, {head: export_saved_model(model_dir, str(root / head), head,
                                                seq_length=TINY_SEQ_LENGTH, dtype="auto")
                       for head in ("preprocessor", "hub_encoder")}


@pytest.fixture(scope="session")
def minilm_encoder_export(minilm_model_dir, tmp_path_factory):
    """The converted MiniLM encoder, exported once (seq_length 128)."""
    export_dir = str(tmp_path_factory.mktemp("minilm_export"))
    return export_saved_model(minilm_model_dir, export_dir, "encoder")


def run_fresh_python(*args, timeout=300):
    """Runs tests/export/fresh_process.py in a new interpreter; returns its JSON reply."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run([sys.executable, os.path.join(HERE, "fresh_process.py"), *args],
                            capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def load_npz(path):
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
