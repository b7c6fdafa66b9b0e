"""Writing Hugging Face task folders: the architecture, labels, problem type, tensors, casing."""

import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints import convert_huggingface_checkpoint, export_huggingface_checkpoint
from bert_tf.checkpoints.model_dir import read_model_info
from tests.checkpoints.test_huggingface_tasks import (
    FOLDERS,
    folder_of,
    load_huggingface_task,
    run_task,
)

PT_FIXTURES = sorted({name for name, fmt in FOLDERS if fmt == "pt"})


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("name", PT_FIXTURES)
def test_model_dir_exports_transformers_own_file(name, tmp_path):
    """transformers' folder -> model directory -> folder gives its tensors back, bit for bit."""
    original = folder_of(name)
    model_dir, exported = str(tmp_path / "model"), str(tmp_path / "exported")
    convert_huggingface_checkpoint(original, model_dir)
    export_huggingface_checkpoint(model_dir, exported)
    theirs, ours = (load_file(os.path.join(folder, "model.safetensors"))
                    for folder in (original, exported))
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_array_equal(ours[key], value, err_msg=key)
    theirs, ours = (_json(os.path.join(folder, "config.json")) for folder in (original, exported))
    for key in ("architectures", "id2label", "problem_type", "hidden_size", "vocab_size"):
        assert ours.get(key) == theirs.get(key), key
    lower_case = _json(os.path.join(original, "tokenizer_config.json"))["do_lower_case"]
    assert _json(os.path.join(exported, "tokenizer_config.json"))["do_lower_case"] == lower_case


def test_converted_model_dir_records_the_task(tmp_path):
    model_dir = str(tmp_path / "model")
    convert_huggingface_checkpoint(folder_of("token_classification", "tf"), model_dir)
    info = read_model_info(model_dir)
    assert info["head"] == "token_classifier" and info["do_lower_case"] is False
    assert info["label_names"] == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    # tokenizer.json only: the model directory gets its tokens as vocab.txt.
    with open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8") as f:
        assert f.read().split("\n")[:3] == ["[PAD]", "[UNK]", "[CLS]"]


def test_keras_task_models_round_trip(tmp_path):
    from bert_tf.keras_tasks import MaskedLM, TextClassifier, TokenClassifier
    from tests.checkpoints.conftest import TESTDATA

    references = np.load(os.path.join(TESTDATA, "hf_tasks_reference.npz"))
    cases = [(TextClassifier, "multi_label_classification", "pt"),
             (TokenClassifier, "token_classification", "tf"),
             (MaskedLM, "masked_lm", "tf")]
    for model_class, name, fmt in cases:
        exported = str(tmp_path / name)
        model = model_class.from_pretrained(folder_of(name, fmt))
        export_huggingface_checkpoint(model, exported)
        config = _json(os.path.join(exported, "config.json"))
        task = load_huggingface_task(exported)
        assert config["architectures"] == [task.architecture]
        assert task.label_names == getattr(model, "label_names", None)
        assert task.problem_type == getattr(model, "problem_type", None)
        # Written without a pooler where transformers' class has none.
        assert task.has_pooler == (name == "multi_label_classification")
        assert _json(os.path.join(exported, "tokenizer_config.json"))["do_lower_case"] == (
            model.preprocessor.lower_case)
        assert os.path.exists(os.path.join(exported, "vocab.txt"))
        ids = {key: references[f"{name}/{key}"]
               for key in ("input_ids", "attention_mask", "token_type_ids")}
        real = ids["attention_mask"].astype(bool)
        for key, value in run_task(task, ids).items():
            reference = references[f"{name}/{key}"]
            if value.ndim >= 2 and value.shape[:2] == real.shape:
                value, reference = value[real], reference[real]
            np.testing.assert_allclose(value, reference, atol=1e-5, rtol=0, err_msg=key)


def test_span_and_choice_models_export_their_heads(tmp_path):
    for name in ("question_answering", "multiple_choice"):
        task = load_huggingface_task(folder_of(name))
        model = task.build_model(num_choices=3)
        export_huggingface_checkpoint(model, str(tmp_path / name))
        back = load_huggingface_task(str(tmp_path / name))
        assert back.architecture == task.architecture
        np.testing.assert_array_equal(back.task_head.kernel.numpy(), task.task_head.kernel.numpy())


def test_masked_lm_export_names_the_pooler_it_drops(tmp_path, caplog):
    """BertForMaskedLM has no pooler (transformers lists a kept one as UNEXPECTED): a
    pretrainer that holds one is written without it and a warning names its tensors; a folder
    read without one (transformers' own BertForMaskedLM) gives no warning."""
    from bert_tf.checkpoints.huggingface import writer

    pretrained = load_huggingface_task(folder_of("pretraining"))
    assert pretrained.has_pooler
    del pretrained.heads["next_sentence"]  # a masked-LM-only pretrainer, pooler held
    with caplog.at_level("WARNING"):
        writer.write(pretrained, str(tmp_path / "mlm"))
    assert "bert.pooler.dense.weight, bert.pooler.dense.bias" in caplog.text
    assert "BertForMaskedLM has no pooler" in caplog.text
    written = load_file(str(tmp_path / "mlm" / "model.safetensors"))
    assert not [key for key in written if "pooler" in key]
    caplog.clear()
    with caplog.at_level("WARNING"):
        writer.write(load_huggingface_task(folder_of("masked_lm")), str(tmp_path / "again"))
    assert "pooler" not in caplog.text
