"""TF Hub BERT SavedModels: read without tf_keras, equal to the SavedModel's own outputs.

The fixtures under tests/testdata/tf_hub/ are made by Model Garden's own TF Hub exporter and
its outputs stored beside them by `tf.saved_model.load` (dev/make_tf_hub_fixtures.py).
"""

import dataclasses
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import building, registry
from bert_tf.checkpoints.tf_hub import encoder_weights, layout, reader, saved_model
from bert_tf.errors import CheckpointError
from tests.entry_points import call_entry_point

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata", "tf_hub")
ENCODER = os.path.join(TESTDATA, "bert_uncased_tiny")
PREPROCESS = os.path.join(TESTDATA, "bert_uncased_tiny_preprocess")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(os.path.join(TESTDATA, "reference.npz")))


@pytest.fixture(scope="module")
def pretrained():
    return building.load_pretrained(ENCODER)


def _inputs(reference, kind):
    return {name: reference[f"{kind}/{name}"] for name in INPUTS}


@pytest.fixture(scope="module")
def masked_lm():
    from bert_tf.keras_tasks import MaskedLM

    return MaskedLM.from_pretrained(ENCODER)


@pytest.mark.parametrize("kind", ["single", "pair"])
def test_outputs_equal_the_saved_models_own(pretrained, masked_lm, reference, kind):
    inputs = _inputs(reference, kind)
    outputs = pretrained.encoder(inputs)
    real = inputs["input_mask"] == 1  # bert_tf zeroes padded positions; Model Garden does not
    np.testing.assert_allclose(outputs["sequence_output"].numpy()[real],
                               reference[f"{kind}/sequence_output"][real], atol=1e-5)
    np.testing.assert_allclose(np.stack(outputs["encoder_outputs"])[:, real],
                               reference[f"{kind}/encoder_outputs"][:, real], atol=1e-5)
    np.testing.assert_allclose(outputs["pooled_output"], reference[f"{kind}/pooled_output"],
                               atol=1e-5)
    # The `.mlm` sub-object's head, as MaskedLM.from_pretrained takes it.
    logits = masked_lm(dict(inputs, masked_lm_positions=reference[f"{kind}/masked_lm_positions"]))
    np.testing.assert_allclose(logits["mlm_logits"], reference[f"{kind}/mlm_logits"], atol=1e-5)


def test_config_vocab_and_casing_come_from_the_saved_model(pretrained):
    config = pretrained.config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.intermediate_size, config.max_position_embeddings,
            config.type_vocab_size, config.vocab_size) == (2, 16, 4, 24, 32, 2, 63)
    # Model Garden's "gelu" is the tanh approximation; its graph has no Erf.
    assert config.hidden_act == "gelu_new"
    assert pretrained.head == "pretrainer" and list(pretrained.heads) == ["masked_lm"]
    assert pretrained.lower_case is True
    assert pretrained.vocab.vocab_file == os.path.join(ENCODER, "assets", "vocab.txt")
    assert pretrained.vocab.tokens[:3] == ["[PAD]", "[UNK]", "[CLS]"]


def test_preprocessing_ids_equal_the_preprocess_models(pretrained, reference):
    texts = ["The film was great.", "An awful movie, and a bad song!",
             "He read the book where the river lives."]
    ids = pretrained.preprocessor(max_seq_length=16, padding="fixed")(tf.constant(texts))
    np.testing.assert_array_equal(ids["input_word_ids"], reference["single/input_word_ids"])


def test_describe_encoder_and_preprocess():
    encoder = registry.describe_folder(ENCODER)
    assert encoder.format == "tf_hub" and encoder.title == "TF Hub SavedModel"
    assert encoder.architecture == ("BERT encoder, 2 layers, H=16, 4 heads, FFN 24, "
                                    "gelu_new")
    assert encoder.pretraining_heads == ["masked_lm"] and encoder.head == "pretrainer"
    assert (encoder.vocab_size, encoder.lower_case) == (63, True)
    assert encoder.max_position_embeddings == 32  # dev/make_tf_hub_fixtures.py's config
    preprocess = registry.describe_folder(PREPROCESS)
    assert preprocess.title == "TF Hub SavedModel, preprocessing"
    assert (preprocess.vocab_size, preprocess.lower_case, preprocess.weights) == (63, True, [])
    assert "vocab: " in str(preprocess)


def test_preprocess_model_gives_vocab_and_casing_but_no_weights():
    with pytest.raises(CheckpointError, match="holds vocab and casing but no weights"):
        building.load_pretrained(PREPROCESS)
    pretrained = building.load_pretrained(ENCODER, preprocess_dir=PREPROCESS)
    assert pretrained.lower_case is True
    with pytest.raises(CheckpointError, match="a TF Hub encoder, not a preprocessing"):
        reader.read(ENCODER, preprocess_dir=ENCODER)


def test_casing_contradiction_refused():
    with pytest.raises(CheckpointError, match="do_lower_case"):
        building.load_pretrained(ENCODER, do_lower_case=False)


def test_not_bert_saved_model_refused_naming_its_signatures():
    with pytest.raises(CheckpointError, match=r"not a TF Hub BERT .* signatures \['scale'\]"):
        registry.detect_format(os.path.join(TESTDATA, "not_bert"))


def test_albert_refused_by_name():
    with pytest.raises(CheckpointError, match="ALBERT-style SavedModel .*sp_model_file"):
        registry.describe_folder(os.path.join(TESTDATA, "albert_like"))


def test_shapes_and_graphs_unlike_bert_refused_by_name():
    contents = saved_model.read_saved_model(ENCODER)
    variables = contents.variables
    with pytest.raises(CheckpointError, match="`embedding_projection/kernel` projects"):
        encoder_weights.infer_config({**variables, "embedding_projection/kernel": (8, 16)},
                                     "gelu_new", ENCODER)
    no_first_layer = {k: v for k, v in variables.items() if "layer_0/" not in k}
    with pytest.raises(CheckpointError, match=r"transformer layers \[1\]"):
        encoder_weights.infer_config(no_first_layer, "gelu_new", ENCODER)
    query = "transformer/layer_0/self_attention/query/kernel"
    with pytest.raises(CheckpointError, match="4 heads of size 8"):
        encoder_weights.infer_config({**variables, query: (16, 4, 8)}, "gelu_new", ENCODER)
    both = dataclasses.replace(contents, ops=contents.ops | {"Erf"})
    with pytest.raises(CheckpointError, match=r"cannot tell .* \['gelu', 'gelu_new'\]"):
        layout.hidden_act(both)


def test_version_1_hub_bert_refused_saying_which_to_take(tmp_path):
    module = tf.Module()
    module.pooler = tf.Variable(tf.zeros([4, 4]), name="bert_model/pooler_transform/kernel")
    tf.saved_model.save(module, str(tmp_path))
    with pytest.raises(CheckpointError, match="versions 1-2 .* version 3 or later"):
        registry.detect_format(str(tmp_path))


def test_damaged_variables_refused_in_one_line(tmp_path):
    folder = tmp_path / "encoder"
    shutil.copytree(ENCODER, folder)
    data = folder / "variables" / "variables.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="damaged or half-written"):
        building.load_pretrained(str(folder))
    (folder / "saved_model.pb").write_bytes(b"\x0a\xff\xff")
    with pytest.raises(CheckpointError, match="saved_model.pb: not a readable SavedModel"):
        registry.describe_folder(str(folder))


def _run_tool(*args):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "convert_checkpoint.py"), *args],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_asset_outside_the_saved_model_refused(tmp_path):
    from tensorflow.core.protobuf import saved_model_pb2

    folder = tmp_path / "encoder"
    shutil.copytree(ENCODER, folder)
    proto = saved_model_pb2.SavedModel.FromString((folder / "saved_model.pb").read_bytes())
    proto.meta_graphs[0].asset_file_def[0].filename = "../../vocab.txt"
    (folder / "saved_model.pb").write_bytes(proto.SerializeToString())
    with pytest.raises(CheckpointError, match="`vocab_file` names a file outside its assets"):
        registry.describe_folder(str(folder))


@pytest.mark.slow
def test_convert_checkpoint_tool_detects_and_converts(tmp_path, reference):
    output_dir = tmp_path / "model"
    result = _run_tool(f"--input={ENCODER}", f"--output_dir={output_dir}")
    assert result.returncode == 0, result.stderr
    from bert_tf.models.bert_encoder import BertEncoder

    encoder = BertEncoder.from_pretrained(str(output_dir))
    outputs = encoder(_inputs(reference, "pair"))
    np.testing.assert_allclose(outputs["pooled_output"], reference["pair/pooled_output"],
                               atol=1e-5)
    # The refusal runs the tool's `__main__` in this process (the same exit code and stderr).
    refused = call_entry_point("tools/convert_checkpoint.py",
                               f"--input={os.path.join(TESTDATA, 'not_bert')}",
                               f"--output_dir={tmp_path / 'refused'}")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "not a TF Hub BERT encoder" in refused.stderr and "['scale']" in refused.stderr
    assert not (tmp_path / "refused").exists()


@pytest.mark.slow  # saving the export traces its packing for several lengths (~20 s)
def test_an_uncased_bert_tf_preprocessor_export_is_read_as_uncased(tmp_path):
    """It lower-cases with `StringLower` (TF Hub's with `CaseFoldUTF8`)."""
    from bert_tf.export.hub_modules import PreprocessorModule

    module = PreprocessorModule(os.path.join(ENCODER, "assets", "vocab.txt"), seq_length=16)
    tf.saved_model.save(module, str(tmp_path), signatures=module.signatures())
    assert layout.inspect(str(tmp_path)).lower_case is True
    assert building.load_pretrained(ENCODER, preprocess_dir=str(tmp_path)).lower_case
