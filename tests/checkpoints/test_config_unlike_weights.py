"""A config that describes far more weights than its files hold (a 569-byte keras-hub config
with 40M positions, a 40M vocab, 100,000 layers; 10^12 classes in task.json) is refused in one
line before anything is expanded or allocated, naming the file."""

import json
import os
import shutil

import pytest

from bert_tf.checkpoints import registry
from bert_tf.errors import CheckpointError

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")


def _read(folder):
    return registry.read_pretrained(folder, do_lower_case=True)


@pytest.mark.parametrize("preset, file, key, value", [
    ("backbone", "config.json", "max_sequence_length", 40_000_000),
    ("backbone", "config.json", "vocabulary_size", 40_000_000),
    ("backbone", "config.json", "num_layers", 100_000),
    ("classifier", "task.json", "num_classes", 10 ** 12),
])
def test_a_keras_hub_config_unlike_its_weights_is_refused(tmp_path, preset, file, key, value):
    folder = str(tmp_path / preset)
    shutil.copytree(os.path.join(TESTDATA, "keras_hub", preset), folder)
    with open(os.path.join(folder, file), encoding="utf-8") as f:
        values = json.load(f)
    values["config"][key] = value
    with open(os.path.join(folder, file), "w", encoding="utf-8") as f:
        json.dump(values, f)
    with pytest.raises(CheckpointError, match=r"model.weights.h5.*: the config describes "
                                              r"[\d,]+ weights, but the files hold [\d,]+;"):
        _read(folder)


def test_a_hugging_face_config_of_100000_layers_is_refused(tmp_path):
    folder = str(tmp_path / "hf")
    shutil.copytree(os.path.join(TESTDATA, "tiny_hf_pretraining"), folder)
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        values = json.load(f)
    values["num_hidden_layers"] = 100_000
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(values, f)
    with pytest.raises(CheckpointError, match=r"the config describes [\d,]+ weights, but the "
                                              r"files hold [\d,]+; the config does not belong"):
        _read(folder)
