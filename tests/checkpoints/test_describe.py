"""checkpoints.describe: what any folder is, from its small files; bad folders, one line each."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints.building import load_pretrained
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.huggingface import read as load_huggingface_task
from bert_tf.checkpoints.registry import FORMATS, describe_folder, detect_format
from bert_tf.errors import CheckpointError
from tests.checkpoints.conftest import edit_config, folder_of, list_in_index
from tests.checkpoints.test_huggingface_tasks import FOLDERS, _copy
from tests.entry_points import call_entry_point

INDEX_FILES = {"sharded_pt": "model.safetensors.index.json",
               "sharded_tf": "tf_model.h5.index.json"}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "convert_checkpoint.py")

HEADS = {"BertModel": ("encoder", None), "BertForPreTraining": ("pretrainer", None),
         "BertForMaskedLM": ("pretrainer", None),
         "BertForSequenceClassification": ("classifier", None),
         "BertForTokenClassification": ("token_classifier", None),
         "BertForQuestionAnswering": ("span_labeler", 2),
         "BertForMultipleChoice": ("multiple_choice", 1)}
LAYOUTS = {"pt": "safetensors", "tf": "TF h5", "sharded_pt": "safetensors, sharded",
           "sharded_tf": "TF h5, sharded"}


@pytest.mark.parametrize("name, fmt", FOLDERS)
def test_every_fixture_folder_is_described(name, fmt, meta):
    expected = meta[name]
    described = describe_folder(folder_of(name, fmt))
    assert described.format == "huggingface"
    assert described.title == f"Hugging Face folder, {LAYOUTS[fmt]}"
    assert described.architecture == expected["architecture"]
    head, units = HEADS[expected["architecture"]]
    assert described.head == head
    assert described.label_names == expected["label_names"]
    assert described.problem_type == expected["problem_type"]
    assert described.lower_case == expected["do_lower_case"]
    if expected["label_names"]:
        assert described.num_labels == len(expected["label_names"])
    elif units is not None:
        assert described.num_labels == units
    text = str(described)
    assert described.title in text and expected["architecture"] in text
    for label in expected["label_names"] or ():
        assert label in text
    vocab = "tokenizer.json" if name == "token_classification" else "vocab.txt"
    assert os.path.basename(described.vocab) == vocab and described.vocab_size > 0
    with open(os.path.join(folder_of(name, fmt), "config.json"), encoding="utf-8") as f:
        assert described.max_position_embeddings == json.load(f)["max_position_embeddings"]


def test_shards_and_pretraining_heads_are_listed():
    described = describe_folder(folder_of("sequence_classification", "sharded_pt"))
    assert described.weights[0] == "model.safetensors.index.json"
    assert len(described.weights) == 4
    described = describe_folder(folder_of("pretraining", "sharded_tf"))
    assert described.weights == ["tf_model.h5.index.json", "tf_model-00001-of-00003.h5",
                                 "tf_model-00002-of-00003.h5", "tf_model-00003-of-00003.h5"]
    assert describe_folder(folder_of("pretraining", "tf")).pretraining_heads == [
        "masked_lm", "next_sentence"]


def test_model_directory_and_google_research_folder(tmp_path):
    model_dir = str(tmp_path / "model")
    convert_checkpoint(None, folder_of("sequence_classification"), "model_dir", model_dir)
    described = describe_folder(model_dir)
    assert (described.format, described.head, described.num_labels) == (
        "model_dir", "classifier", 3)
    assert described.label_names == ["negative", "neutral", "positive"]
    assert described.lower_case is True and described.vocab.endswith("vocab.txt")
    assert described.architecture == "BertForSequenceClassification"
    with open(os.path.join(model_dir, "bert_config.json"), encoding="utf-8") as f:
        assert described.max_position_embeddings == json.load(f)["max_position_embeddings"]

    from tests.checkpoints.test_google_research import tf1_names, write_tf1_checkpoint

    folder = tmp_path / "google"
    folder.mkdir()
    hf = folder_of("pretraining")
    write_tf1_checkpoint(tf1_names(load_file(os.path.join(hf, "model.safetensors"))),
                         str(folder / "bert_model.ckpt"))
    shutil.copy(os.path.join(hf, "vocab.txt"), folder)
    shutil.copy(os.path.join(hf, "config.json"), folder / "bert_config.json")
    for path in (str(folder), str(folder / "bert_model.ckpt")):
        described = describe_folder(path)
        assert described.format == "google_research"
        assert described.pretraining_heads == ["masked_lm", "next_sentence"]
        assert described.head == "pretrainer" and described.lower_case is None
        positions = load_file(os.path.join(hf, "model.safetensors"))[
            "bert.embeddings.position_embeddings.weight"]
        assert described.max_position_embeddings == positions.shape[0]  # from the index
    assert detect_format(str(folder)).name == "google_research"


def test_keras_file(tmp_path):
    import keras

    path = str(tmp_path / "tiny.keras")
    keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save(path)
    described = describe_folder(path)
    assert (described.format, described.architecture) == ("keras", "Sequential")
    with pytest.raises(CheckpointError, match="keras.saving.load_model"):
        load_pretrained(path)


def test_not_a_checkpoint_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(CheckpointError, match=r"not a checkpoint folder.*notes.txt"):
        describe_folder(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        describe_folder(str(tmp_path / "nowhere"))


# Bad folders: one line naming the file, from describe, load and convert alike; nothing written.

def _refused(folder, match, tmp_path):
    """Every reader refuses `folder` with one line matching `match`; returns it."""
    output = tmp_path / "out"
    messages = []
    for read in (describe_folder, load_huggingface_task, load_pretrained,
                 lambda f: convert_checkpoint(None, f, "model_dir", str(output))):
        with pytest.raises(CheckpointError, match=match) as error:
            read(folder)
        messages.append(str(error.value))
        assert "\n" not in messages[-1]
    assert not output.exists()
    return messages[0]


@pytest.mark.parametrize("model_type, architecture", [
    ("roberta", "RobertaForSequenceClassification"),
    ("distilbert", "DistilBertForSequenceClassification")])
def test_another_model_family_is_named(tmp_path, model_type, architecture):
    folder = _copy(tmp_path, "sequence_classification", "tf")
    edit_config(folder, model_type=model_type, architectures=[architecture])
    message = _refused(folder, f"model_type '{model_type}' \\({architecture}\\), not BERT",
                       tmp_path)
    assert os.path.join(folder, "config.json") in message


def test_h5_of_another_architecture_names_its_layers(tmp_path):
    import h5py

    folder = _copy(tmp_path, "sequence_classification", "tf")
    with h5py.File(os.path.join(folder, "tf_model.h5"), "r+") as f:
        f.attrs["layer_names"] = [b"roberta", b"classifier"]
    _refused(folder, r"holds layers \['roberta', 'classifier'\], no `bert`", tmp_path)


def test_keras3_weights_file_is_not_a_huggingface_h5(tmp_path):
    import keras

    folder = _copy(tmp_path, "sequence_classification", "tf")
    path = str(tmp_path / "model.weights.h5")
    keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save_weights(path)
    shutil.copy(path, os.path.join(folder, "tf_model.h5"))
    _refused(folder, "a Keras 3 weights file.*model.load_weights", tmp_path)


def test_num_labels_unlike_the_head(tmp_path):
    folder = _copy(tmp_path, "sequence_classification")
    edit_config(folder, num_labels=2)
    _refused(folder, r"`num_labels` is 2, but `classifier.weight` has 3 outputs", tmp_path)


def test_id2label_with_a_missing_index(tmp_path):
    folder = _copy(tmp_path, "token_classification", "tf")
    edit_config(folder, id2label={"0": "O", "1": "B-PER", "3": "B-LOC", "4": "I-LOC"})
    _refused(folder, r"`id2label` lacks ids \[2\]", tmp_path)


def test_pickle_only_folder_says_how_to_convert(tmp_path):
    folder = tmp_path / "pickled"
    folder.mkdir()
    for name in ("config.json", "vocab.txt"):
        shutil.copy(os.path.join(folder_of("sequence_classification"), name), folder)
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    message = _refused(str(folder), "never unpickles", tmp_path)
    assert "save_pretrained(dir, safe_serialization=True)" in message
    os.remove(folder / "config.json")
    with pytest.raises(CheckpointError, match="never unpickles"):
        describe_folder(str(folder))


# (fixture, folder suffix, its second shard, a weight name its index may list).
SHARDS = [("sequence_classification", "sharded_pt", "model-00002-of-00003.safetensors",
           "bert.encoder.layer.9.output.dense.weight"),
          ("pretraining", "sharded_tf", "tf_model-00002-of-00003.h5",
           "tf_bert_for_pre_training/bert/encoder/layer_._9/output/dense/kernel:0")]


def test_index_and_shards_alone_are_a_huggingface_folder():
    folder = folder_of("pretraining", "sharded_tf")
    assert not os.path.exists(os.path.join(folder, "tf_model.h5"))
    assert [entry.name for entry in FORMATS if entry.recognise(folder)] == ["huggingface"]


@pytest.mark.parametrize("name, fmt, shard, weight", SHARDS)
def test_sharded_index_naming_a_missing_shard(tmp_path, name, fmt, shard, weight):
    folder = _copy(tmp_path, name, fmt)
    os.remove(os.path.join(folder, shard))
    message = _refused(folder, f"names shard '{shard}', which is not in", tmp_path)
    assert message.startswith(os.path.join(folder, INDEX_FILES[fmt]))


@pytest.mark.parametrize("name, fmt, shard, weight", SHARDS)
def test_index_naming_a_weight_no_shard_holds(tmp_path, name, fmt, shard, weight):
    folder = _copy(tmp_path, name, fmt)
    list_in_index(folder, INDEX_FILES[fmt], weight, shard)
    message = _refused(folder, f"puts `{weight}` in {shard}, which does not hold it", tmp_path)
    assert message.startswith(os.path.join(folder, INDEX_FILES[fmt]))


def test_a_weight_in_two_tf_shards(tmp_path):
    import h5py

    folder = _copy(tmp_path, "pretraining", "sharded_tf")
    name = "bert/embeddings/LayerNorm/beta:0"
    first, second = (os.path.join(folder, f"tf_model-0000{i}-of-00003.h5") for i in (1, 2))
    with h5py.File(first, "r") as source, h5py.File(second, "r+") as shard:
        shard.create_dataset(name, data=source[name][()])
        names = [n.encode() if isinstance(n, str) else n for n in shard.attrs["layer_names"]]
        shard.attrs["layer_names"] = names + [name.encode()]
    message = _refused(folder, f"tensor `{name}` is also in", tmp_path)
    assert message.startswith(second) and first in message


def test_converter_detects_the_source(tmp_path):
    model_dir = str(tmp_path / "model")
    convert_checkpoint(None, folder_of("token_classification", "tf"), "model_dir", model_dir)
    with open(os.path.join(model_dir, "model_info.json")) as f:
        assert json.load(f)["head"] == "token_classifier"
    hf_dir = str(tmp_path / "hf")
    convert_checkpoint(None, model_dir, "huggingface", hf_dir)
    described = describe_folder(hf_dir)
    assert described.architecture == "BertForTokenClassification"
    assert described.label_names == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    np.testing.assert_equal(described.num_labels, 5)


@pytest.mark.slow
def test_describe_cli(tmp_path):
    result = subprocess.run(
        [sys.executable, TOOL, f"--describe={folder_of('sequence_classification', 'tf')}"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr
    assert "Hugging Face folder, TF h5 (tf_model.h5)" in result.stdout
    assert "labels negative, neutral, positive" in result.stdout
    assert "vocab.txt (63 tokens), lower case" in result.stdout
    # The refusal runs the tool's `__main__` in this process (the same exit code and stderr).
    result = call_entry_point(TOOL, f"--describe={tmp_path}")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "not a checkpoint folder" in result.stderr
