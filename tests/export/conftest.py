"""Shared export fixtures: tiny model directories, their exports, a fresh-process runner."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as text

from bert_tf.model_dir import write_model_dir
from bert_tf.configs import BertConfig
from bert_tf.export.exporter import export_saved_model
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)

HERE = os.path.dirname(__file__)
REPO = os.path.dirname(os.path.dirname(HERE))
# A small real (cased) WordPiece vocab, so the tiny models build fast.
TINY_VOCAB = os.path.join(REPO, "tests", "testdata", "tokenization", "bbc_cased_vocab.txt")
TINY_SEQ_LENGTH = 24
LABELS = ["business", "sport", "tech"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
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


def tiny_config():
    with open(TINY_VOCAB, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    return BertConfig(vocab_size=vocab_size, hidden_size=12, num_hidden_layers=2,
                      num_attention_heads=3, intermediate_size=20, max_position_embeddings=64)


def write_tiny_model_dir(model_dir, head, info=None):
    """A randomly initialised model directory for `head` with the tiny (cased) vocab.

    `info` replaces the model_info.json fields written by default (`head`, `do_lower_case`).
    """
    config = tiny_config()
    encoder = BertEncoder(config)
    info = dict({"head": head, "do_lower_case": False}, **(info or {}))
    if head == "encoder":
        model, items = encoder, {"encoder": encoder}
    else:
        model = {
            "classifier": lambda: BertClassifier(encoder, len(LABELS)),
            "token_classifier": lambda: BertTokenClassifier(encoder, len(TAGS)),
            "span_labeler": lambda: BertSpanLabeler(encoder),
            "multiple_choice": lambda: BertMultipleChoice(encoder, num_choices=3),
            "pretrainer": lambda: BertPretrainer(encoder),
        }[head]()
        items = model.checkpoint_items()
        if head == "classifier":
            info["label_names"] = LABELS
        if head == "token_classifier":
            info["label_names"] = TAGS
        if head == "multiple_choice":
            info["num_choices"] = 3
    write_model_dir(model_dir, config, vocab_file=TINY_VOCAB, info=info, **items)
    return model


@pytest.fixture(scope="session")
def tiny_classifier(tmp_path_factory):
    """`(model_dir, export_path)` of a tiny classifier with label names, exported once."""
    root = tmp_path_factory.mktemp("tiny_classifier")
    model_dir = str(root / "model")
    write_tiny_model_dir(model_dir, "classifier")
    return model_dir, export_saved_model(model_dir, str(root / "export"), "classifier",
                                         seq_length=TINY_SEQ_LENGTH)


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
