"""A config too big for the machine is refused in one line, for every format, before any
weight is read (`checkpoints/model_size.py`, called by `weight_map.expected_shapes`)."""

import json
import os
import re
import shutil

import pytest

from bert_tf.checkpoints import model_size, weight_map
from bert_tf.checkpoints.building import load_pretrained
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from tests.checkpoints.conftest import TESTDATA
from tests.entry_points import call_entry_point

TINY_HF = os.path.join(TESTDATA, "tiny_hf_pretraining")
# The sizes of the issue: 10^9 x 4096 float32 is ~15 TiB, more than any machine has.
HUGE_VOCAB, HUGE_HIDDEN = 10 ** 9, 4096


def _edit_json(path, edit):
    with open(path, encoding="utf-8") as f:
        values = json.load(f)
    edit(values)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(values, f)


def _grow_bert_config(values):
    values.update(vocab_size=HUGE_VOCAB, hidden_size=HUGE_HIDDEN)


def _grow_keras_hub_config(values):
    values["config"].update(vocabulary_size=HUGE_VOCAB, hidden_dim=HUGE_HIDDEN)


def _huggingface(tmp_path):
    folder = tmp_path / "hf"
    shutil.copytree(TINY_HF, folder)
    return str(folder), str(folder / "config.json"), _grow_bert_config


def _google_research(tmp_path):
    from tests.checkpoints.test_formats import _google_research as fixture

    folder = fixture(tmp_path).path
    return folder, os.path.join(folder, "bert_config.json"), _grow_bert_config


def _model_dir(tmp_path):
    from tests.checkpoints.test_formats import _model_dir as fixture

    folder = fixture(tmp_path).path
    return folder, os.path.join(folder, "bert_config.json"), _grow_bert_config


def _keras_hub(tmp_path):
    folder = tmp_path / "backbone"
    shutil.copytree(os.path.join(TESTDATA, "keras_hub", "backbone"), folder)
    return str(folder), str(folder / "config.json"), _grow_keras_hub_config


def _model_garden(tmp_path):
    folder = tmp_path / "encoder"
    shutil.copytree(os.path.join(TESTDATA, "model_garden", "encoder"), folder)
    return str(folder), str(folder / "bert_config.json"), _grow_bert_config


# Formats whose config is a file that can be edited; TF Hub infers its config from the
# variable shapes (test_tf_hub_inferred_config_is_checked) and `.keras` files are not read.
EDITABLE = {"model_dir": _model_dir, "google_research": _google_research,
            "huggingface": _huggingface, "keras_hub": _keras_hub,
            "model_garden": _model_garden}


def _forbid_building(monkeypatch):
    """Makes reading weights fail loudly: a refusal must come before any value is read (and
    readers build no model at all)."""

    def refuse(*args, **kwargs):
        raise AssertionError("weights were read")

    monkeypatch.setattr(weight_map, "translate", refuse)


def _assert_refused(error, config_file):
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{config_file}: vocab_size={HUGE_VOCAB}, "
                              f"hidden_size={HUGE_HIDDEN}, num_hidden_layers=")
    # ~15,000 GiB: the embedding table alone is 10^9 x 4096 x 4 bytes.
    assert re.search(r", intermediate_size=\d+ need 1\d,\d{3}\.\d GiB of float32 weights; "
                     r"this machine has [\d,]+\.\d GiB of memory\.$", message), message


@pytest.mark.parametrize("name", sorted(EDITABLE))
def test_too_big_config_is_refused_before_building(name, tmp_path, monkeypatch):
    folder, config_file, grow = EDITABLE[name](tmp_path)
    _edit_json(config_file, grow)
    _forbid_building(monkeypatch)
    with pytest.raises(CheckpointError) as error:
        load_pretrained(folder)
    _assert_refused(error, config_file)


def test_tf_hub_inferred_config_is_checked(monkeypatch):
    _forbid_building(monkeypatch)
    from bert_tf.checkpoints.tf_hub import encoder_weights

    huge = BertConfig(vocab_size=HUGE_VOCAB, hidden_size=HUGE_HIDDEN, num_attention_heads=16)
    monkeypatch.setattr(encoder_weights, "infer_config", lambda *args: huge)
    folder = os.path.join(TESTDATA, "tf_hub", "bert_uncased_tiny")
    with pytest.raises(CheckpointError) as error:
        load_pretrained(folder)
    _assert_refused(error, folder)


@pytest.mark.parametrize("heads", [(), ("masked_lm",), ("masked_lm", "next_sentence")])
def test_count_equals_the_built_models(heads):
    # Odd sizes so that no two terms of the count can be confused.
    config = BertConfig(vocab_size=31, hidden_size=6, num_hidden_layers=3,
                        num_attention_heads=2, intermediate_size=11,
                        max_position_embeddings=13, type_vocab_size=3)
    encoder = BertEncoder(config)
    layers = [encoder]
    if heads:
        pretrainer = BertPretrainer(encoder, use_next_sentence="next_sentence" in heads)
        layers = [layer for key, layer in pretrainer.checkpoint_items().items()]
    built = sum(int(variable.numpy().size)
                for variable in weight_map.model_weights(*layers).values())
    assert model_size.count_parameters(config, heads) == built


def test_refuses_what_this_machine_cannot_hold(monkeypatch):
    config = BertConfig(vocab_size=100, hidden_size=8, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=16)
    needed = model_size.count_parameters(config) * 4
    monkeypatch.setattr(model_size, "physical_memory", lambda: needed)
    model_size.check_fits_memory(config, where="fits.json")  # exactly enough: accepted
    monkeypatch.setattr(model_size, "physical_memory", lambda: needed - 1)
    with pytest.raises(CheckpointError, match=r"^small\.json: vocab_size=100, hidden_size=8, "
                       r"num_hidden_layers=1, intermediate_size=16 need 0\.0 GiB"):
        model_size.check_fits_memory(config, where="small.json")


def test_physical_memory_is_this_machines():
    with open("/proc/meminfo", encoding="utf-8") as f:
        total_kib = int(f.readline().split()[1])  # MemTotal: N kB
    assert model_size.physical_memory() == pytest.approx(total_kib * 1024, rel=0.05)


def test_convert_tool_refuses_in_one_line_and_writes_nothing(tmp_path):
    """The tool's `__main__` in this process (`call_entry_point`): its exit code and stderr."""
    folder, config_file, grow = _huggingface(tmp_path)
    _edit_json(config_file, grow)
    output = tmp_path / "out"
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={folder}",
                              f"--output_dir={output}")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if config_file in line]
    assert len(errors) == 1 and "GiB of float32 weights" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not output.exists()
