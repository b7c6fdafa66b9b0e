import json

import pytest

from bert_tf.configs import BertConfig, ConfigError

GOOGLE_BASE = {  # google-research uncased_L-12_H-768_A-12/bert_config.json
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
    "type_vocab_size": 2, "vocab_size": 30522,
}


def test_reads_google_research_config(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(GOOGLE_BASE))
    config = BertConfig.from_json_file(str(path))
    assert config.hidden_size == 768 and config.head_size == 64
    assert config.layer_norm_eps == 1e-12  # google-research hard-codes 1e-12


def test_reads_hugging_face_config(minilm_hf_dir):
    config = BertConfig.from_json_file(f"{minilm_hf_dir}/config.json")
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (6, 384,
                                                                                          12)
    assert config.hidden_act == "gelu" and config.vocab_size == 30522


def test_json_round_trip(tmp_path):
    config = BertConfig.from_dict(dict(GOOGLE_BASE, hidden_act="gelu_new", layer_norm_eps=1e-6))
    config.to_json_file(str(tmp_path / "c.json"))
    assert BertConfig.from_json_file(str(tmp_path / "c.json")) == config


def test_masked_lm_head_keys_round_trip_and_are_written_only_when_set(tmp_path):
    config = BertConfig.from_dict(dict(GOOGLE_BASE, masked_lm_hidden_act="gelu",
                                       masked_lm_layer_norm_eps=1e-5))
    config.to_json_file(str(tmp_path / "c.json"))
    assert BertConfig.from_json_file(str(tmp_path / "c.json")) == config
    assert sorted(BertConfig.from_dict(GOOGLE_BASE).to_dict()) == sorted(
        dict(GOOGLE_BASE, layer_norm_eps=1e-12))  # google-research's keys, unchanged


def test_missing_key_is_named(tmp_path):
    values = dict(GOOGLE_BASE)
    del values["num_attention_heads"]
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(values))
    with pytest.raises(ConfigError, match=r"bert_config.json.*missing.*num_attention_heads"):
        BertConfig.from_json_file(str(path))


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match="unknown key.*hiden_size"):
        BertConfig.from_dict(dict(GOOGLE_BASE, hiden_size=10))


@pytest.mark.parametrize("key, value, message", [
    ("hidden_act", "gelu_fast", "Unknown `hidden_act"),
    ("num_attention_heads", 5, "divisible"),
    ("hidden_size", 0, "positive integer"),
    ("hidden_dropout_prob", 1.5, r"in \[0, 1\)"),
    ("hidden_dropout_prob", "0.1", "must be a number.*'0.1'"),
    ("layer_norm_eps", -1, "layer_norm_eps.*must be positive"),
    ("initializer_range", 0, "initializer_range.*must be positive"),
    ("hidden_act", ["gelu"], "Unknown `hidden_act"),
    ("vocab_size", "30522", "positive integer"),
    ("masked_lm_hidden_act", "gelu_fast", "Unknown `masked_lm_hidden_act"),
    ("masked_lm_layer_norm_eps", 0, "masked_lm_layer_norm_eps.*must be positive"),
])
def test_bad_values(key, value, message):
    with pytest.raises(ConfigError, match=message):
        BertConfig.from_dict(dict(GOOGLE_BASE, **{key: value}))


def test_relative_positions_refused():
    with pytest.raises(ConfigError, match="position_embedding_type"):
        BertConfig.from_dict(dict(GOOGLE_BASE, position_embedding_type="relative_key"))


def test_not_json(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text("{vocab_size: 3")
    with pytest.raises(ConfigError, match="not valid JSON"):
        BertConfig.from_json_file(str(path))


def test_a_config_nested_100000_deep_is_one_error(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match=rf"^{path}: JSON nested deeper than 100 levels"):
        BertConfig.from_json_file(str(path))
