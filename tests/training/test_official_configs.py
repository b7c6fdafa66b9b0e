"""Every pretraining flagfile in official_configs/ parses, is documented, and builds its model."""

import dataclasses
import glob
import os

import pytest
from absl import flags

from bert_tf import cli
from bert_tf.configs import BertConfig
from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.options import PretrainingOptions, check_pretraining_options
from bert_tf.training.pretraining_runner import load_config

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CONFIGS = os.path.join(ROOT, "official_configs")


def _pretraining_flagfiles():
    paths = sorted(glob.glob(os.path.join(CONFIGS, "*.flags")))
    return [p for p in paths if "bert_tf.run_pretraining" in open(p, encoding="utf-8").read()]


def test_the_pretraining_flagfiles_are_all_there():
    names = {os.path.basename(p) for p in _pretraining_flagfiles()}
    assert {"demo.flags", "bert_base_phase1.flags", "bert_base_phase2.flags",
            "bert_large_phase1.flags", "bert_large_phase2.flags"} <= names


@pytest.mark.parametrize("path", _pretraining_flagfiles(), ids=os.path.basename)
def test_flagfile_parses_and_builds_its_model_shrunk(path, monkeypatch):
    header = [line for line in open(path, encoding="utf-8") if line.startswith("#")]
    text = "".join(header)
    for part in ("Command:", "Hardware:", "Expected:"):
        assert part in text, f"{path}: header lacks {part!r}"
    flag_values = flags.FlagValues()
    cli.define_flags(PretrainingOptions, flag_values)
    flag_values(["run_pretraining", f"--flagfile={path}"])  # unknown flags would raise here
    options = cli.options_from_flags(PretrainingOptions, flag_values)
    # Real-run flagfiles leave the folders to the command line.
    check_pretraining_options(dataclasses.replace(
        options, output_dir=options.output_dir or "out", input_file=options.input_file or "in"))
    defaults = PretrainingOptions()
    for line in open(path, encoding="utf-8"):
        if line.startswith("--"):  # no line restates a default
            name = line[2:].split("=")[0].strip()
            restated = getattr(options, name) == getattr(defaults, name)
            assert not restated or name == "bert_config_file", line
    monkeypatch.chdir(ROOT)
    config = load_config(options)  # also checks max_position_embeddings >= max_seq_length
    assert options.train_batch_size % options.gradient_accumulation_steps == 0
    shrunk = dataclasses.replace(config, num_hidden_layers=1, hidden_size=32, num_attention_heads=2,
                                 intermediate_size=64)
    assert isinstance(shrunk, BertConfig)
    model = build_pretrainer(shrunk, not options.no_nsp, options.left_to_right, options.remat)
    # Paper configs use the general 30,522-piece vocab; the demo its corpus-learned vocab file.
    vocab_rows = (sum(1 for _ in open(os.path.join(ROOT, options.vocab_file), encoding="utf-8"))
                  if options.vocab_file else 30522)
    assert model.masked_lm.embedding_layer.input_dim == config.vocab_size == vocab_rows


@pytest.mark.parametrize("name, layers, hidden", [
    ("tiny", 2, 128), ("mini", 4, 256), ("small", 4, 512), ("medium", 8, 512),
    ("base", 12, 768), ("large", 24, 1024)])
def test_model_configs_have_the_google_research_sizes(name, layers, hidden):
    config = BertConfig.from_json_file(os.path.join(CONFIGS, f"bert_config_{name}.json"))
    assert (config.num_hidden_layers, config.hidden_size) == (layers, hidden)
    assert config.num_attention_heads == hidden // 64 and config.intermediate_size == 4 * hidden
    assert config.vocab_size == 30522 and config.max_position_embeddings == 512
