"""The TF Hub encoder export's `.mlm` sub-object, and bert_tf's TF Hub reader reading the
export back: a round trip through Model Garden's variable names and shapes."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints.building import load_pretrained
from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.checkpoints.tf_hub.saved_model import read_saved_model
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from tests.entry_points import call_entry_point
from tests.fixtures import tiny_config_for
from tests.tokenization.reference_data import CASED_VOCAB as TINY_VOCAB
from tests.tools.conftest import run_tool

pytestmark = pytest.mark.slow

IDS = np.array([[2, 40, 41, 42, 3, 0, 0], [2, 50, 3, 60, 61, 62, 3]], np.int32)
INPUTS = {"input_word_ids": IDS, "input_mask": (IDS > 0).astype(np.int32),
          "input_type_ids": np.array([[0] * 7, [0, 0, 0, 1, 1, 1, 1]], np.int32)}
POSITIONS = np.array([[1, 3], [2, 5]], np.int32)


def _write_model_dir(model_dir):
    """A random pretrainer model directory; the masked-LM output bias is made non-zero so that
    a head read back without it would differ."""
    pretrainer = BertPretrainer(BertEncoder(tiny_config_for(TINY_VOCAB)))
    bias = pretrainer.masked_lm.output_bias
    bias.assign(np.random.default_rng(0).normal(size=bias.shape).astype(np.float32))
    write_model_dir(model_dir, tiny_config_for(TINY_VOCAB), vocab_file=TINY_VOCAB,
                    info={"head": "pretrainer", "do_lower_case": False},
                    **pretrainer.checkpoint_items())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(the model directory's `Pretrained`, the hub export's path) of a pretrainer.

    Exported by tools/export_saved_model.py in a fresh interpreter, as a user does (the
    tool's one successful whole-program run in the suite): the tests below read that export,
    and test_tools_export_and_convert_back converts it back, so the module exports once."""
    root = tmp_path_factory.mktemp("hub_mlm")
    model_dir, export_dir = str(root / "model"), str(root / "hub")
    _write_model_dir(model_dir)
    result = run_tool("export_saved_model", f"--model_dir={model_dir}",
                      f"--export_dir={export_dir}", "--head=hub_encoder")
    assert result.returncode == 0, result.stderr
    return load_pretrained(model_dir), os.path.join(export_dir, "1")


def _outputs(pretrained):
    model = pretrained.build_model()
    outputs = dict(pretrained.encoder(INPUTS))
    outputs.update(model(dict(INPUTS, masked_lm_positions=POSITIONS)))
    return {name: np.asarray(outputs[name])
            for name in ("sequence_output", "pooled_output", "mlm_logits")}


@pytest.mark.subprocess  # `exported` runs the tool
def test_mlm_sub_object_computes_the_model_directorys_logits(exported):
    original, path = exported
    hub_encoder = tf.saved_model.load(path)
    outputs = hub_encoder.mlm(dict(INPUTS, masked_lm_positions=POSITIONS))
    expected = _outputs(original)
    for name, value in expected.items():
        np.testing.assert_allclose(outputs[name].numpy(), value, atol=1e-5, err_msg=name)
    assert len(outputs["encoder_outputs"]) == original.config.num_hidden_layers
    # The head's variables (transform kernel and bias, LayerNorm gamma and beta, output bias)
    # are the `.mlm` sub-object's only, as in Model Garden's with_mlm layout.
    assert len(hub_encoder.mlm.trainable_variables) == len(hub_encoder.trainable_variables) + 5
    assert not [v for v in hub_encoder.trainable_variables if v.name.startswith("cls/")]


@pytest.mark.subprocess  # `exported` runs the tool
def test_tf_hub_reader_reads_the_export_back(exported):
    original, path = exported
    read_back = load_pretrained(path)
    assert read_back.format == "tf_hub" and list(read_back.heads) == ["masked_lm"]
    assert read_back.config.to_dict() == dict(original.config.to_dict(),
                                              hidden_dropout_prob=0.1,
                                              attention_probs_dropout_prob=0.1,
                                              initializer_range=0.02)
    assert read_back.lower_case is False and read_back.vocab is not None
    got, expected = _outputs(read_back), _outputs(original)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-5, err_msg=name)


@pytest.mark.subprocess  # `exported` runs the tool
def test_saved_variables_are_model_gardens(exported):
    _, path = exported
    contents = read_saved_model(path)
    config = tiny_config_for(TINY_VOCAB)
    head_size = config.hidden_size // config.num_attention_heads
    assert contents.variables["transformer/layer_0/self_attention/query/kernel"] == (
        config.hidden_size, config.num_attention_heads, head_size)
    assert contents.variables["transformer/layer_1/self_attention/attention_output/kernel"] == (
        config.num_attention_heads, head_size, config.hidden_size)
    assert not [name for name in contents.variables if "seed" in name]  # dropout's states


@pytest.mark.subprocess  # `exported` runs the tool
def test_dropout_draws_new_masks_in_training_only(exported):
    _, path = exported
    hub_encoder = tf.saved_model.load(path)
    first, second = (hub_encoder(INPUTS, training=True)["pooled_output"].numpy()
                     for _ in range(2))
    assert not np.allclose(first, second)
    np.testing.assert_array_equal(hub_encoder(INPUTS)["pooled_output"].numpy(),
                                  hub_encoder(INPUTS)["pooled_output"].numpy())


def test_encoder_without_head_has_no_mlm(hub_exports):
    # An encoder-only model directory's TF Hub export (test_hub_modules.py's, made once:
    # tests/export/conftest.py).
    path = hub_exports[1]["hub_encoder"]
    assert not hasattr(tf.saved_model.load(path), "mlm")
    read_back = load_pretrained(path)
    assert read_back.heads == {} and read_back.head == "encoder"


@pytest.mark.subprocess
def test_tools_export_and_convert_back(exported, tmp_path):
    # The entry points end to end: a pretrainer exported as a TF Hub encoder, converted back
    # into a model directory, computes the same logits. The export runs in a fresh interpreter
    # (`exported`: tools/export_saved_model.py's one whole-program run in the suite); the
    # conversion runs the tool's `__main__` in this process (its fresh-interpreter runs:
    # tests/tools, tests/checkpoints).
    original, path = exported
    back = str(tmp_path / "back")
    converted = call_entry_point("tools/convert_checkpoint.py", f"--input={path}",
                                 f"--output_dir={back}")
    assert converted.returncode == 0, converted.stderr
    got, expected = _outputs(load_pretrained(back)), _outputs(original)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-5, err_msg=name)
