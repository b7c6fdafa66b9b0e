"""Fixtures of the checkpoint tests: Hugging Face reference outputs and a tiny HF folder."""

import json
import os
import shutil

import numpy as np
import pytest

from tests.fixtures import TESTDATA


@pytest.fixture(scope="session")
def minilm_reference():
    """transformers BertModel outputs of MiniLM (dev/make_reference_fixtures.py)."""
    return dict(np.load(os.path.join(TESTDATA, "minilm_reference.npz")))


@pytest.fixture(scope="session")
def tiny_reference():
    """transformers BertForPreTraining MLM / NSP logits of the tiny random checkpoint."""
    return dict(np.load(os.path.join(TESTDATA, "tiny_hf_pretraining_reference.npz")))


@pytest.fixture
def tiny_hf_dir(tmp_path):
    """A writable copy of the tiny `BertForPreTraining` folder saved by transformers."""
    path = tmp_path / "tiny_hf"
    shutil.copytree(os.path.join(TESTDATA, "tiny_hf_pretraining"), path)
    return str(path)


@pytest.fixture
def run_encoder():
    """Runs an encoder on reference ids; returns numpy (sequence_output, pooled_output)."""

    def run(encoder, reference):
        outputs = encoder({"input_word_ids": reference["input_ids"],
                           "input_mask": reference["attention_mask"],
                           "input_type_ids": reference["token_type_ids"]})
        return outputs["sequence_output"].numpy(), outputs["pooled_output"].numpy()

    return run


@pytest.fixture
def run_pretrainer():
    """Runs encoder + heads (from a model directory) on the tiny reference inputs."""
    from bert_tf.checkpoints.model_dir import read_config, restore_model_dir
    from bert_tf.models.bert_encoder import BertEncoder
    from bert_tf.models.bert_pretrainer import BertPretrainer

    def run(model_dir, reference):
        pretrainer = BertPretrainer(BertEncoder(read_config(model_dir)))
        restore_model_dir(model_dir, **pretrainer.checkpoint_items())
        outputs = pretrainer({"input_word_ids": reference["input_ids"],
                              "input_mask": reference["attention_mask"],
                              "input_type_ids": reference["token_type_ids"],
                              "masked_lm_positions": reference["masked_lm_positions"]})
        return outputs["mlm_logits"].numpy(), outputs["nsp_logits"].numpy()

    return run


# Hugging Face task folders (BertFor*, PyTorch and TF) and their reference outputs, made by
# dev/make_hf_task_fixtures.py; shared by tests/checkpoints and tests/keras_tasks.
HF_TASKS = os.path.join(TESTDATA, "hf_tasks")


def folder_of(name, fmt="pt"):
    return os.path.join(HF_TASKS, f"{name}_{fmt}")


@pytest.fixture(scope="module")
def references():
    return np.load(os.path.join(TESTDATA, "hf_tasks_reference.npz"))


@pytest.fixture(scope="module")
def meta():
    with open(os.path.join(TESTDATA, "hf_tasks_reference.json"), encoding="utf-8") as f:
        return json.load(f)["fixtures"]


def edit_safetensors(folder, edit):
    """Applies `edit(tensors)` to the folder's `model.safetensors` (a copy the test owns)."""
    from safetensors.numpy import load_file, save_file

    path = os.path.join(folder, "model.safetensors")
    tensors = load_file(path)
    edit(tensors)
    save_file(tensors, path, metadata={"format": "pt"})


def edit_config(folder, **changes):
    """Updates the folder's `config.json` with `changes`."""
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        config = json.load(f)
    config.update(changes)
    with open(path, "w") as f:
        json.dump(config, f)


def list_in_index(folder, index_file, weight, shard):
    """Lists `weight` in `shard` in the folder's sharded-weights index (a copy the test owns)."""
    path = os.path.join(folder, index_file)
    with open(path) as f:
        index = json.load(f)
    index["weight_map"][weight] = shard
    with open(path, "w") as f:
        json.dump(index, f)
