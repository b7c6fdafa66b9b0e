"""Model Garden TF2 checkpoints: folders written by Model Garden's own converter and
BertPretrainerV2 (dev/make_model_garden_fixtures.py), read and compared with the outputs
Model Garden computed from them."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.checkpoints import model_garden
from bert_tf.checkpoints.building import with_models
from bert_tf.checkpoints.model_garden.layout import find_prefix
from bert_tf.errors import CheckpointError
from tests.entry_points import call_entry_point
from tests.fixtures import MODEL_GARDEN

# Fixture folder: the layout it is described as.
LAYOUTS = {"encoder": "encoder", "encoder_v2": "encoder", "model": "model",
           "pretrainer": "pretrainer",
           "pretrainer_as_encoder": "pretrainer", "pretrainer_nsp": "pretrainer"}
TOLERANCE = 1e-5


def folder(name):
    return os.path.join(MODEL_GARDEN, name)


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(os.path.join(MODEL_GARDEN, "model_garden_reference.npz")))


def encoder_inputs(reference):
    return {key: reference[key] for key in ("input_word_ids", "input_mask", "input_type_ids")}


def check_encoder(encoder, reference, name, pooled="pooled_output"):
    """Real tokens' sequence output and the pooled output against Model Garden's (bert_tf
    zeroes padded positions, Model Garden computes them)."""
    outputs = encoder(encoder_inputs(reference))
    real = reference["input_mask"].astype(bool)
    np.testing.assert_allclose(outputs["sequence_output"].numpy()[real],
                               reference[f"{name}/sequence_output"][real], atol=TOLERANCE)
    np.testing.assert_allclose(outputs["pooled_output"].numpy(), reference[f"{name}/{pooled}"],
                               atol=TOLERANCE)


def edited_copy(tmp_path, name, **config):
    """A copy of fixture `name` with `config` merged into its bert_config.json (None drops)."""
    path = tmp_path / name
    shutil.copytree(folder(name), path)
    config_file = path / "bert_config.json"
    values = json.loads(config_file.read_text())
    values.update(config)
    config_file.write_text(json.dumps({k: v for k, v in values.items() if v is not None}))
    return str(path)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_each_layout_reads_as_model_garden_computes(name, reference):
    assert model_garden.recognise(folder(name))
    description = model_garden.describe(folder(name))
    assert description.title == f"Model Garden TF2 checkpoint, `{LAYOUTS[name]}` layout"
    pretrained = with_models(model_garden.read(folder(name), do_lower_case=True))
    assert pretrained.config.hidden_act == "gelu_new"  # Model Garden's gelu is the tanh form
    # The position table's length, which the corpus launcher checks --max_seq_length against.
    with open(os.path.join(folder(name), "bert_config.json")) as f:
        assert description.max_position_embeddings == json.load(f)["max_position_embeddings"]
    positions = pretrained.encoder.embeddings.position_embeddings.shape[0]
    assert positions == description.max_position_embeddings
    check_encoder(pretrained.encoder, reference, name)
    is_pretrainer = LAYOUTS[name] == "pretrainer"
    assert description.pretraining_heads == (["masked_lm"] if is_pretrainer else [])
    assert sorted(pretrained.heads) == sorted(description.pretraining_heads)
    if is_pretrainer:
        model = pretrained.build_model()
        logits = model(dict(encoder_inputs(reference),
                            masked_lm_positions=reference["masked_lm_positions"]))["mlm_logits"]
        expected = reference[f"{name}/mlm_logits"]
        np.testing.assert_allclose(logits, expected, atol=TOLERANCE)


def test_next_sentence_pooler_is_copied_into_the_encoder_when_asked(reference):
    description = model_garden.describe(folder("pretrainer_nsp"))
    assert "next_sentence.pooler_dense" in description.architecture
    pretrained = with_models(model_garden.read(folder("pretrainer_nsp"), do_lower_case=True,
                                               copy_pooler_dense_to_encoder=True))
    check_encoder(pretrained.encoder, reference, "pretrainer_nsp",
                  pooled="next_sentence_pooled_output")
    with pytest.raises(CheckpointError, match="holds no `next_sentence.pooler_dense`"):
        model_garden.read(folder("pretrainer"), copy_pooler_dense_to_encoder=True)


def test_checkpoint_prefix_is_found_by_index_or_state_file(tmp_path):
    assert find_prefix(folder("encoder")) == os.path.join(folder("encoder"), "bert_model.ckpt")
    assert find_prefix(folder("model")) == os.path.join(folder("model"), "bert_model.ckpt-1")
    both = tmp_path / "both"
    shutil.copytree(folder("model"), both)
    for name in os.listdir(folder("encoder")):
        if name.startswith("bert_model.ckpt."):
            shutil.copy(os.path.join(folder("encoder"), name), both)
    assert find_prefix(str(both)) == str(both / "bert_model.ckpt-1")  # the state file's
    os.remove(both / "checkpoint")
    with pytest.raises(CheckpointError, match="several checkpoints"):
        find_prefix(str(both))


def test_tf1_checkpoint_is_not_model_garden():
    assert not model_garden.recognise(folder("tf1"))


def test_checkpoint_without_encoder_is_refused_naming_what_it_holds():
    with pytest.raises(CheckpointError, match=r"no Model Garden BERT encoder.*"
                                              r"it holds head \(4 variables\)"):
        model_garden.recognise(folder("no_encoder"))


def test_embedding_width_unlike_hidden_size_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match=r"`embedding_size=8` differs from "
                                              r"`hidden_size=16`.*no embedding projection"):
        model_garden.read(folder("embedding_width"))
    # Without the config's word for it, the object graph's projection is refused.
    path = edited_copy(tmp_path, "embedding_width", embedding_size=None)
    with pytest.raises(CheckpointError, match="encoder has an embedding projection"):
        model_garden.read(path)


def test_config_unlike_the_checkpoint_is_refused_naming_the_tensor(tmp_path):
    path = edited_copy(tmp_path, "encoder", num_attention_heads=4)
    with pytest.raises(CheckpointError, match=r"_query_dense/kernel` has shape \[16, 2, 8\], "
                                              r"but the config \(num_attention_heads 4\) "
                                              r"needs \[16, 4, 4\]"):
        model_garden.read(path)
    path = edited_copy(tmp_path, "model", num_hidden_layers=1)
    with pytest.raises(CheckpointError, match=r"map to no model weight.*_transformer_layers/1/"):
        model_garden.read(path)


def test_masked_lm_and_text_classifier_from_pretrained(reference):
    from bert_tf.keras_tasks import MaskedLM, TextClassifier

    mlm = MaskedLM.from_pretrained(folder("pretrainer"), do_lower_case=True)
    logits = mlm.predict(dict(encoder_inputs(reference),
                              masked_lm_positions=reference["masked_lm_positions"]),
                         verbose=0)["mlm_logits"]
    expected = reference["pretrainer/mlm_logits"]
    np.testing.assert_allclose(logits, expected, atol=TOLERANCE)
    classifier = TextClassifier.from_pretrained(folder("encoder"), num_classes=2,
                                                do_lower_case=True)
    check_encoder(classifier.encoder, reference, "encoder")
    with pytest.raises(CheckpointError, match="no masked-LM head"):
        MaskedLM.from_pretrained(folder("model"), do_lower_case=True)


@pytest.mark.slow
def test_tool_describes_converts_detected_and_refuses_in_one_line(tmp_path, reference):
    from bert_tf.checkpoints.building import load_pretrained

    # --describe and the refusal run the tool's `__main__` in this process (the same exit code,
    # stdout and stderr; --describe in a fresh interpreter: test_describe.py::test_describe_cli).
    result = call_entry_point("tools/convert_checkpoint.py",
                              f"--describe={folder('pretrainer_nsp')}")
    assert result.returncode == 0, result.stderr
    assert "Model Garden TF2 checkpoint, `pretrainer` layout" in result.stdout
    assert "pretraining heads: masked_lm" in result.stdout
    model_dir = tmp_path / "converted"
    result = _run_tool(f"--input={folder('pretrainer')}", f"--output_dir={model_dir}",
                       "--do_lower_case")
    assert result.returncode == 0, result.stderr
    converted = load_pretrained(str(model_dir))
    assert converted.format == "model_dir" and converted.head == "pretrainer"
    check_encoder(converted.encoder, reference, "pretrainer")
    logits = converted.build_model()(dict(
        encoder_inputs(reference), masked_lm_positions=reference["masked_lm_positions"]))
    expected = reference["pretrainer/mlm_logits"]
    np.testing.assert_allclose(logits["mlm_logits"], expected, atol=TOLERANCE)
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={folder('no_encoder')}",
                              f"--output_dir={tmp_path / 'no'}")
    assert result.returncode == 1
    assert "no Model Garden BERT encoder" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "no").exists()


def _run_tool(*args):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, os.path.join(root, "tools", "convert_checkpoint.py"),
                           *args], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


@pytest.mark.parametrize("name", sorted(LAYOUTS) + ["tf1"])
def test_recognised_by_one_registry_format_only(name):
    from bert_tf.checkpoints.registry import FORMATS

    expected = "google_research" if name == "tf1" else "model_garden"
    assert [entry.name for entry in FORMATS if entry.recognise(folder(name))] == [expected]


def test_written_as_huggingface_and_read_back(tmp_path, reference):
    from bert_tf.checkpoints.building import load_pretrained, with_models
    from bert_tf.checkpoints.registry import find_format

    output = str(tmp_path / "hf")
    find_format("huggingface").write(with_models(model_garden.read(folder("encoder"),
                                                                   do_lower_case=True)),
                                     output)
    back = load_pretrained(output)
    assert back.format == "huggingface" and back.head == "encoder"
    check_encoder(back.encoder, reference, "encoder")


def test_a_bert_tf_training_run_is_not_model_garden(tmp_path):
    import tensorflow as tf

    from bert_tf.checkpoints.registry import detect_format
    from bert_tf.configs import BertConfig
    from bert_tf.models import BertEncoder, BertPretrainer

    config = BertConfig(vocab_size=63, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32)
    encoder = BertEncoder(config)
    heads = BertPretrainer(encoder, use_next_sentence=False).checkpoint_items()
    checkpoint = tf.train.Checkpoint(**heads)
    tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=1,
                               checkpoint_name="ckpt").save()  # as training.checkpointing
    config.to_json_file(str(tmp_path / "bert_config.json"))
    assert not model_garden.recognise(str(tmp_path))
    assert detect_format(str(tmp_path)).name == "model_dir"
