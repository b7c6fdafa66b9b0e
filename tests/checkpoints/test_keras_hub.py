"""keras-hub presets: read against keras-hub's own outputs, written and read back, refused.

The fixtures and their outputs were made by keras-hub 0.32 (dev/make_keras_hub_fixtures.py).
"""

import dataclasses
import json
import os
import shutil

import h5py
import numpy as np
import pytest

from bert_tf.checkpoints import building, registry
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.keras_hub import layout as keras_hub_layout
from bert_tf.checkpoints.keras_hub import writer
from bert_tf.errors import CheckpointError
from bert_tf.file_io import OutputExistsError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata", "keras_hub")
HF_FOLDER = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata", "hf_tasks",
                         "sequence_classification_pt")
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def references():
    return dict(np.load(os.path.join(FIXTURES, "reference.npz")))


@pytest.fixture(scope="module")
def texts():
    with open(os.path.join(FIXTURES, "reference.json"), encoding="utf-8") as f:
        return json.load(f)["texts"]


@pytest.fixture(scope="module")
def read_fixtures():
    return {name: building.load_pretrained(os.path.join(FIXTURES, name))
            for name in ("backbone", "classifier", "masked_lm")}


def _copy(tmp_path, name):
    path = tmp_path / name
    shutil.copytree(os.path.join(FIXTURES, name), path)
    return path


def _encoder_inputs(references, name):
    return {"input_word_ids": references[f"{name}/token_ids"],
            "input_mask": references[f"{name}/padding_mask"].astype(np.int32),
            "input_type_ids": references[f"{name}/segment_ids"]}


def _run(pretrained, references, name):
    """(sequence_output at real tokens, pooled_output) on the fixture's keras-hub ids."""
    outputs = pretrained.encoder(_encoder_inputs(references, name))
    mask = references[f"{name}/padding_mask"][..., None]
    return outputs["sequence_output"].numpy() * mask, outputs["pooled_output"].numpy()


@pytest.mark.parametrize("name", ["backbone", "classifier", "masked_lm", "roberta"])
def test_each_preset_is_recognised_as_keras_hub(name):
    assert registry.detect_format(os.path.join(FIXTURES, name)).name == "keras_hub"


def test_a_hugging_face_folder_is_not_a_preset():
    assert not keras_hub_layout.recognise(HF_FOLDER)


def test_backbone_outputs_equal_keras_hub(read_fixtures, references):
    pretrained = read_fixtures["backbone"]
    sequence, pooled = _run(pretrained, references, "backbone")
    mask = references["backbone/padding_mask"][..., None]
    np.testing.assert_allclose(sequence, references["backbone/sequence_output"] * mask,
                               atol=TOLERANCE)
    np.testing.assert_allclose(pooled, references["backbone/pooled_output"], atol=TOLERANCE)
    assert pretrained.head == "encoder" and pretrained.lower_case is True
    assert pretrained.config.hidden_act == "gelu_approximate"


def test_classifier_logits_on_raw_strings_equal_keras_hub(read_fixtures, references, texts):
    pretrained = read_fixtures["classifier"]
    assert (pretrained.head, pretrained.num_labels, pretrained.max_seq_length) == (
        "classifier", 3, 24)
    inputs = pretrained.preprocessor(padding="fixed")(np.array(texts))
    np.testing.assert_array_equal(inputs["input_word_ids"].numpy(),
                                  references["classifier/token_ids"])
    logits = pretrained.build_model()(inputs).numpy()
    np.testing.assert_allclose(logits, references["classifier/logits"], atol=TOLERANCE)


def test_masked_lm_logits_equal_keras_hub(read_fixtures, references):
    pretrained = read_fixtures["masked_lm"]
    assert pretrained.head == "pretrainer" and list(pretrained.heads) == ["masked_lm"]
    assert pretrained.lower_case is False  # the fixture's tokenizer is cased
    sequence = pretrained.encoder(_encoder_inputs(references, "masked_lm"))["sequence_output"]
    logits = pretrained.heads["masked_lm"](sequence, references["masked_lm/mask_positions"])
    np.testing.assert_allclose(logits.numpy(), references["masked_lm/logits"], atol=TOLERANCE)


def _masked_lm_inputs(references):
    return dict(_encoder_inputs(references, "masked_lm"),
                masked_lm_positions=references["masked_lm/mask_positions"])


def test_masked_lm_head_settings_survive_a_model_directory(references, tmp_path):
    """keras-hub's exact-GELU, epsilon-1e-5 head, rebuilt from a converted model directory by
    each public path (before, they rebuilt it with the encoder's tanh GELU: 1.6e-3 off)."""
    from bert_tf.checkpoints.model_dir import read_config, restore_model_dir
    from bert_tf.keras_tasks import MaskedLM
    from bert_tf.models import BertEncoder, BertPretrainer

    model_dir = str(tmp_path / "model_dir")
    convert_checkpoint(None, os.path.join(FIXTURES, "masked_lm"), "model_dir", model_dir)
    restored = BertPretrainer(BertEncoder(read_config(model_dir)), use_next_sentence=False)
    restore_model_dir(model_dir, **restored.checkpoint_items())  # as fill_mask and export do
    models = {"build_model": building.load_pretrained(model_dir).build_model(),
              "MaskedLM.from_pretrained": MaskedLM.from_pretrained(model_dir),
              "restore_model_dir": restored}
    for name, model in models.items():
        logits = model(_masked_lm_inputs(references))["mlm_logits"]
        np.testing.assert_allclose(logits.numpy(), references["masked_lm/logits"],
                                   atol=TOLERANCE, err_msg=name)


def test_masked_lm_head_settings_survive_a_hugging_face_folder(references, tmp_path, caplog):
    """transformers' head takes the encoder's settings, so the export warns; bert_tf reads
    the head's own back from config.json."""
    hf_dir = str(tmp_path / "hf")
    with caplog.at_level("WARNING"):
        convert_checkpoint(None, os.path.join(FIXTURES, "masked_lm"), "huggingface", hf_dir)
    assert "head computes gelu and 1e-05" in caplog.text
    logits = building.load_pretrained(hf_dir).build_model()(
        _masked_lm_inputs(references))["mlm_logits"]
    np.testing.assert_allclose(logits.numpy(), references["masked_lm/logits"], atol=TOLERANCE)


def test_describe_names_task_head_vocab_casing_and_sequence_length():
    described = registry.describe_folder(os.path.join(FIXTURES, "classifier"))
    with open(os.path.join(FIXTURES, "classifier", "config.json"), encoding="utf-8") as f:
        config = json.load(f)["config"]
    assert described.max_position_embeddings == config["max_sequence_length"]
    text = str(described)
    for part in ("keras-hub preset", "sequence_length 24", "task.weights.h5",
                 "BertTextClassifier (bert_tf head: classifier)", "head: 3 outputs",
                 "vocabulary.txt (63 tokens), lower case"):
        assert part in text, text
    text = str(registry.describe_folder(os.path.join(FIXTURES, "masked_lm")))
    assert "BertMaskedLM" in text and "pretraining heads: masked_lm" in text
    assert ", cased" in text


@pytest.mark.parametrize("name", ["backbone", "classifier", "masked_lm"])
def test_write_then_read_gives_the_same_weights(read_fixtures, tmp_path, name):
    pretrained = read_fixtures[name]
    writer.write(pretrained, str(tmp_path / "preset"))
    again = building.load_pretrained(str(tmp_path / "preset"))
    layers = [(pretrained.encoder, again.encoder)]
    if pretrained.task_head is not None:
        layers.append((pretrained.task_head, again.task_head))
    layers += [(pretrained.heads[key], again.heads[key]) for key in pretrained.heads]
    for first, second in layers:
        for a, b in zip(first.weights, second.weights, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    assert (again.head, again.lower_case, again.max_seq_length, again.vocab.tokens) == (
        pretrained.head, pretrained.lower_case, pretrained.max_seq_length,
        pretrained.vocab.tokens)


def test_roberta_preset_is_refused_by_name():
    with pytest.raises(CheckpointError, match="RobertaBackbone preset, not BERT"):
        building.load_pretrained(os.path.join(FIXTURES, "roberta"))


def test_distilbert_preset_is_refused_by_name(tmp_path):
    path = _copy(tmp_path, "backbone")
    config = json.loads((path / "config.json").read_text())
    config["registered_name"] = "keras_hub>DistilBertBackbone"
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="DistilBertBackbone preset, not BERT"):
        registry.describe_folder(str(path))


@pytest.mark.parametrize("name, missing", [("backbone", "model.weights.h5"),
                                           ("classifier", "task.weights.h5"),
                                           ("backbone", "assets/tokenizer/vocabulary.txt")])
def test_missing_file_is_named(tmp_path, name, missing):
    path = _copy(tmp_path, name)
    os.remove(path / missing)
    with pytest.raises(FileNotFoundError, match=os.path.basename(missing)):
        building.load_pretrained(str(path))


def test_weights_unlike_config_are_refused_by_tensor(tmp_path):
    path = _copy(tmp_path, "backbone")
    config = json.loads((path / "config.json").read_text())
    config["config"]["intermediate_dim"] = 64
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="_feedforward_intermediate_dense/vars/0` has "
                                              "shape \\[16, 32\\]"):
        building.load_pretrained(str(path))


def test_attention_split_unlike_num_heads_is_refused(tmp_path):
    path = _copy(tmp_path, "backbone")
    config = json.loads((path / "config.json").read_text())
    config["config"]["num_heads"] = 4
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="query_dense/vars/0` has shape \\[16, 2, 8\\]"):
        building.load_pretrained(str(path))


def test_unused_tensor_is_refused_by_name(tmp_path):
    path = _copy(tmp_path, "backbone")
    with h5py.File(path / "model.weights.h5", "a") as f:
        f.create_dataset("layers/extra/vars/0", data=np.zeros([3], np.float32))
    with pytest.raises(CheckpointError, match="layers/extra/vars/0"):
        building.load_pretrained(str(path))


def test_softmax_classifier_is_refused(tmp_path):
    path = _copy(tmp_path, "classifier")
    task = json.loads((path / "task.json").read_text())
    task["config"]["activation"] = "softmax"
    (path / "task.json").write_text(json.dumps(task))
    with pytest.raises(CheckpointError, match="task.json: `activation` is 'softmax'"):
        building.load_pretrained(str(path))


def test_casing_flag_contradicting_tokenizer_is_refused():
    with pytest.raises(CheckpointError, match="contradicts .*tokenizer.json"):
        building.load_pretrained(os.path.join(FIXTURES, "classifier"), do_lower_case=False)


def test_writer_refuses_a_head_keras_hub_lacks_and_writes_nothing(read_fixtures, tmp_path):
    pretrained = read_fixtures["classifier"]
    token_classifier = dataclasses.replace(pretrained, head="token_classifier")
    with pytest.raises(CheckpointError, match="token_classifier head"):
        writer.write(token_classifier, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_writer_refuses_an_existing_output(read_fixtures, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(OutputExistsError):
        writer.write(read_fixtures["backbone"], str(tmp_path / "out"))
    assert os.listdir(tmp_path / "out") == ["keep.txt"]


def test_text_classifier_from_pretrained_keeps_the_head(references, texts):
    from bert_tf.keras_tasks import TextClassifier

    classifier = TextClassifier.from_pretrained(os.path.join(FIXTURES, "classifier"))
    np.testing.assert_allclose(classifier.predict(texts, verbose=0),
                               references["classifier/logits"], atol=TOLERANCE)


@pytest.mark.slow  # each run starts a TensorFlow process
def test_convert_checkpoint_tool_both_ways(tmp_path, references):
    """keras-hub preset -> model directory -> keras-hub preset, as a user runs the tool."""
    from tests.tools.conftest import run_tool

    model_dir, preset = tmp_path / "model_dir", tmp_path / "preset"
    result = run_tool("convert_checkpoint", f"--input={FIXTURES}/classifier",
                      f"--output_dir={model_dir}")
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads((model_dir / "model_info.json").read_text())
    assert (info["head"], info["do_lower_case"], info["max_seq_length"]) == (
        "classifier", True, 24)
    result = run_tool("convert_checkpoint", "--from=ours", "--to=keras_hub",
                      f"--input={model_dir}", f"--output_dir={preset}")
    assert result.returncode == 0, result.stderr[-3000:]
    pretrained = building.load_pretrained(str(preset))
    inputs = _encoder_inputs(references, "classifier")
    logits = pretrained.build_model()(inputs).numpy()
    np.testing.assert_allclose(logits, references["classifier/logits"], atol=TOLERANCE)
    assert pretrained.max_seq_length == 24 and pretrained.lower_case is True


def test_convert_checkpoint_tool_refuses_roberta_in_one_line(tmp_path):
    """The tool's `__main__` in this process (`call_entry_point`): its exit code and one line."""
    from tests.entry_points import assert_user_error, call_entry_point

    result = call_entry_point("tools/convert_checkpoint.py", f"--input={FIXTURES}/roberta",
                              f"--output_dir={tmp_path / 'out'}")
    assert_user_error(result, "RobertaBackbone preset, not BERT")
    assert not (tmp_path / "out").exists()


def test_sharded_weights_are_refused_in_one_line(tmp_path):
    path = _copy(tmp_path, "backbone")
    os.remove(path / "model.weights.h5")
    (path / "model.weights.json").write_text('{"weight_map": {}}')
    with pytest.raises(CheckpointError, match="sharded keras-hub weights"):
        building.load_pretrained(str(path))


def test_lower_casing_without_accent_stripping_is_read_with_a_warning(caplog):
    with caplog.at_level("WARNING"):
        pretrained = building.load_pretrained(os.path.join(FIXTURES, "backbone"))
    assert pretrained.lower_case is True
    assert "without stripping accents" in caplog.text
