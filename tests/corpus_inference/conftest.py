"""Fine-tune-free task model directories for tools/predict.py, and a small corpus."""

import os

import pytest

from bert_tf.keras_tasks import TextClassifier, TokenClassifier
from tests.fixtures import MODEL_GARDEN

LABELS = ["negative", "neutral", "positive"]
TAGS = ["O", "B-PER", "I-PER"]
# 10 one-WordPiece words (the MiniLM vocab): window splits are checked by hand on them.
TEN_WORDS = "one two three four five six seven eight nine ten"


@pytest.fixture(scope="module")
def classifier_dir(tiny_model_dir, tmp_path_factory):
    """`tiny_model_dir` with a 3-class head (random, named), saved by `save_model_dir`."""
    folder = str(tmp_path_factory.mktemp("classifier") / "model")
    TextClassifier.from_pretrained(tiny_model_dir, num_classes=3,
                                   label_names=LABELS).save_model_dir(folder)
    return folder


@pytest.fixture(scope="module")
def tagger_dir(tiny_model_dir, tmp_path_factory):
    """`tiny_model_dir` with a 3-tag token classifier head, saved by `save_model_dir`."""
    folder = str(tmp_path_factory.mktemp("tagger") / "model")
    TokenClassifier.from_pretrained(tiny_model_dir, num_classes=3,
                                    label_names=TAGS).save_model_dir(folder)
    return folder


@pytest.fixture
def model_garden_dir():
    """A Model Garden TF2 encoder folder made by Model Garden's own code (tests/testdata):
    its positions are in its `bert_config.json` only (32)."""
    return os.path.join(MODEL_GARDEN, "encoder")


def write_corpus(folder):
    """Two text files: lines of several lengths, an empty line, a line longer than 16 pieces.

    Returns the glob and `{id: text}` of the lines that get a result.
    """
    files = {
        "a.txt": ["Ada Lovelace wrote the first program.", "", "A short line.",
                  " ".join([TEN_WORDS] * 3)],
        "b.txt": ["Charles Babbage designed the engine.", "It was never built."],
    }
    texts = {}
    for name, lines in files.items():
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        texts.update({f"{path}:{number}": line for number, line in enumerate(lines, 1) if line})
    return os.path.join(folder, "*.txt"), texts
