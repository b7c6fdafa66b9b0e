"""One parametrized test over `registry.FORMATS`: every format, one fixture folder each.

For each format: its sub-package has the same four files (`__init__.py` naming its `FORMAT`,
`layout.py` recognising and describing, `reader.py` reading, `writer.py` where bert_tf writes
it), its fixture is recognised by it and by no other entry, described, read (outputs equal the
reference its own library computed, where one exists), and written and read back by every
format bert_tf writes. A new format adds its fixture to `FIXTURES`
(checkpoints/ADDING_A_FORMAT.md); `test_every_format_has_a_fixture` holds that.
"""

import dataclasses
import importlib
import os
import shutil

import keras
import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints import registry
from bert_tf.checkpoints.building import load_pretrained
from bert_tf.checkpoints.registry import FORMATS, describe_folder, detect_format
from bert_tf.errors import CheckpointError
from tests.fixtures import MODEL_GARDEN, TESTDATA

TINY_HF = os.path.join(TESTDATA, "tiny_hf_pretraining")
# Largest difference to a reference its own library computed (float32, 2 tiny layers).
TOLERANCE = 1e-5


@dataclasses.dataclass
class Fixture:
    """A fixture folder of one format.

    Attributes:
      path: the folder (or file, or checkpoint prefix).
      reference: None, or the inputs (`input_ids`, `attention_mask`, `token_type_ids`, and
        `masked_lm_positions` for heads) with the outputs the format's own library computed:
        `sequence_output` / `pooled_output` of the encoder, `mlm_logits` / `nsp_logits` of
        the pretraining heads.
      readable: whether `read` gives a `Pretrained` (a `.keras` file is only described).
    """

    path: str
    reference: dict = None
    readable: bool = True


def _tiny_reference():
    """transformers' BertForPreTraining logits on the tiny checkpoint
    (dev/make_reference_fixtures.py)."""
    return dict(np.load(os.path.join(TESTDATA, "tiny_hf_pretraining_reference.npz")))


def _huggingface(tmp_path):
    return Fixture(TINY_HF, _tiny_reference())


def _google_research(tmp_path):
    # Written by tf.compat.v1's Saver under google-research's names (test_google_research),
    # from the same tensors: transformers' logits are its reference too.
    from tests.checkpoints.test_google_research import tf1_names, write_tf1_checkpoint

    folder = tmp_path / "uncased_tiny"
    write_tf1_checkpoint(tf1_names(load_file(os.path.join(TINY_HF, "model.safetensors"))),
                         str(folder / "bert_model.ckpt"))
    shutil.copy(os.path.join(TINY_HF, "vocab.txt"), folder)
    shutil.copy(os.path.join(TINY_HF, "config.json"), folder / "bert_config.json")
    return Fixture(str(folder), _tiny_reference())


def _model_dir(tmp_path):
    from bert_tf.checkpoints import convert_huggingface_checkpoint

    folder = str(tmp_path / "model_dir")
    convert_huggingface_checkpoint(TINY_HF, folder, do_lower_case=True)
    return Fixture(folder, _tiny_reference())


def _keras(tmp_path):
    path = str(tmp_path / "tiny.keras")
    keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save(path)
    return Fixture(path, readable=False)


def _tf_hub(tmp_path):
    # Model Garden's TF Hub export and its own outputs (dev/make_tf_hub_fixtures.py); its
    # sequence_output is left out: bert_tf zeroes padded positions, Model Garden does not
    # (test_tf_hub compares it at real positions).
    folder = os.path.join(TESTDATA, "tf_hub")
    saved = np.load(os.path.join(folder, "reference.npz"))
    names = {"input_ids": "input_word_ids", "attention_mask": "input_mask",
             "token_type_ids": "input_type_ids", "masked_lm_positions": "masked_lm_positions",
             "pooled_output": "pooled_output", "mlm_logits": "mlm_logits"}
    return Fixture(os.path.join(folder, "bert_uncased_tiny"),
                   {name: saved[f"pair/{key}"] for name, key in names.items()})
def _keras_hub(tmp_path):
    # keras-hub's BertBackbone outputs (dev/make_keras_hub_fixtures.py) on the first sentence,
    # cut to its real tokens: bert_tf computes real tokens only.
    folder = os.path.join(TESTDATA, "keras_hub")
    saved = np.load(os.path.join(folder, "reference.npz"))
    length = int(saved["backbone/padding_mask"][0].sum())
    return Fixture(os.path.join(folder, "backbone"), {
        "input_ids": saved["backbone/token_ids"][:1, :length],
        "attention_mask": np.ones([1, length], np.int32),
        "token_type_ids": saved["backbone/segment_ids"][:1, :length],
        "sequence_output": saved["backbone/sequence_output"][:1, :length],
        "pooled_output": saved["backbone/pooled_output"][:1]})
def _model_garden(tmp_path):
    # Model Garden's converter wrote it (dev/make_model_garden_fixtures.py), named as the
    # published v3 BERTs are; the reference is Model Garden's BertEncoder on the fixture's
    # unpadded row (bert_tf zeroes padded positions, Model Garden computes them).
    saved = np.load(os.path.join(MODEL_GARDEN, "model_garden_reference.npz"))
    reference = {"input_ids": saved["input_word_ids"], "attention_mask": saved["input_mask"],
                 "token_type_ids": saved["input_type_ids"],
                 "sequence_output": saved["encoder/sequence_output"],
                 "pooled_output": saved["encoder/pooled_output"]}
    return Fixture(os.path.join(MODEL_GARDEN, "encoder"), {k: v[:1] for k, v in reference.items()})


# Format name -> (tmp_path) -> Fixture.
FIXTURES = {
    "model_dir": _model_dir,
    "google_research": _google_research,
    "huggingface": _huggingface,
    "keras": _keras,
    "tf_hub": _tf_hub,
    "keras_hub": _keras_hub,
    "model_garden": _model_garden,
}
NAMES = [entry.name for entry in FORMATS]
# Pretraining heads a written format cannot hold, dropped with a warning by its `write`.
DROPPED_HEADS = {"keras_hub": {"next_sentence"}}  # keras-hub's BertMaskedLM has no NSP
WRITABLE = [entry.name for entry in FORMATS if entry.write is not None]


@pytest.fixture(params=NAMES)
def format_fixture(request, tmp_path):
    """`(format name, Fixture)` of every format in the registry."""
    return request.param, FIXTURES[request.param](tmp_path)


def _outputs(pretrained, reference):
    """The reference's output names computed by `pretrained`, as numpy."""
    inputs = {"input_word_ids": reference["input_ids"], "input_mask": reference["attention_mask"],
              "input_type_ids": reference["token_type_ids"]}
    outputs = {}
    if "masked_lm_positions" in reference:
        model = pretrained.build_model()
        outputs.update(model(dict(inputs, masked_lm_positions=reference["masked_lm_positions"])))
    outputs.update(pretrained.encoder(inputs))
    return {name: np.asarray(outputs[name]) for name in reference if name in outputs
            and name not in inputs}


def test_every_format_has_a_fixture():
    assert sorted(FIXTURES) == sorted(NAMES), "add the new format's fixture to FIXTURES"
    names = [name for entry in FORMATS for name in entry.names]
    assert len(names) == len(set(names)), f"two formats share a name: {names}"


@pytest.mark.parametrize("entry", FORMATS, ids=NAMES)
def test_laid_out_in_the_same_four_files(entry):
    package_name, _, module = entry.recognise.__module__.rpartition(".")
    assert module == "layout" and package_name.startswith("bert_tf.checkpoints.")
    package = importlib.import_module(package_name)
    assert package.FORMAT is entry
    layout = importlib.import_module(f"{package.__name__}.layout")
    reader = importlib.import_module(f"{package.__name__}.reader")
    assert (entry.recognise, entry.describe) == (layout.recognise, layout.describe)
    assert entry.read is reader.read
    if entry.write is not None:
        assert entry.write is importlib.import_module(f"{package.__name__}.writer").write


def test_recognised_as_itself_and_no_other(format_fixture):
    name, folder = format_fixture
    assert [entry.name for entry in FORMATS if entry.recognise(folder.path)] == [name]
    assert detect_format(folder.path).name == name


def test_described(format_fixture):
    name, folder = format_fixture
    described = describe_folder(folder.path)
    entry = registry.find_format(name)
    assert described.format == name and described.title.startswith(entry.title)
    assert str(described).startswith(f"{folder.path}: {described.title}")


def test_read_equals_the_reference(format_fixture):
    name, folder = format_fixture
    if not folder.readable:
        with pytest.raises(CheckpointError, match="not read as a checkpoint"):
            load_pretrained(folder.path)
        return
    pretrained = load_pretrained(folder.path)
    assert pretrained.format == name
    assert pretrained.head in ("encoder", "pretrainer", "classifier", "token_classifier",
                               "span_labeler", "multiple_choice")
    assert pretrained.lower_case is True and pretrained.vocab is not None
    if folder.reference is not None:
        outputs = _outputs(pretrained, folder.reference)
        assert outputs, f"the reference of {name} names no output bert_tf computes"
        for output, value in outputs.items():
            np.testing.assert_allclose(value, folder.reference[output], atol=TOLERANCE, rtol=0,
                                       err_msg=f"{name}: {output}")


@pytest.mark.parametrize("target", WRITABLE)
def test_written_and_read_back(format_fixture, target, tmp_path):
    name, folder = format_fixture
    if not folder.readable or target == name:
        return  # nothing to write, or a copy (the converter refuses it)
    pretrained = load_pretrained(folder.path)
    output = str(tmp_path / f"written_{target}")
    registry.find_format(target).write(pretrained, output)
    back = load_pretrained(output)
    assert back.format == target and back.head == pretrained.head
    kept = sorted(set(pretrained.heads) - DROPPED_HEADS.get(target, set()))
    assert sorted(back.heads) == kept and back.lower_case is True
    original = {w.path: w.numpy() for w in pretrained.encoder.weights}
    for weight in back.encoder.weights:
        if weight.path.startswith("pooler/") and not back.has_pooler:
            continue  # a layout without a pooler (HF BertForMaskedLM), as has_pooler says
        np.testing.assert_array_equal(weight.numpy(), original[weight.path], err_msg=weight.path)
    for key in kept:
        layer = pretrained.heads[key]
        for a, b in zip(layer.get_weights(), back.heads[key].get_weights()):
            np.testing.assert_array_equal(a, b, err_msg=key)
