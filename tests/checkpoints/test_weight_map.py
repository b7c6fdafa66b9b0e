"""The shared name-map helper: coverage of every weight, all-or-nothing assignment."""

import numpy as np
import pytest

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.configs import BertConfig

CONFIG = BertConfig(vocab_size=11, hidden_size=4, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=6, max_position_embeddings=5)


def _table_and_source():
    """A table covering every encoder weight, and a source holding a value for each."""
    encoder, _ = weight_map.build_models(CONFIG)
    weights = weight_map.model_weights(encoder)
    generic = {name.replace("layer_1/", f"layer_{LAYER}/") for name in weights
               if not name.startswith("layer_0/")}
    table = [Rule(name, "src/" + name, False) for name in sorted(generic)]
    rules = weight_map.expand(table, CONFIG.num_hidden_layers)
    rng = np.random.default_rng(0)
    values = {rule.source: rng.normal(size=weights[rule.target].shape).astype("f4")
              for rule in rules}
    source = weight_map.TensorSource({k: v.shape for k, v in values.items()}, values.get, "mem")
    return encoder, weights, table, rules, source, values


def test_expand_fills_layers_and_drops_absent_heads():
    table = [Rule(f"layer_{LAYER}/x", f"l.{LAYER}.x", True), Rule("masked_lm/b", "b", False)]
    assert weight_map.expand(table, 2) == [Rule("layer_0/x", "l.0.x", True),
                                           Rule("layer_1/x", "l.1.x", True)]
    assert weight_map.expand(table, 1, heads=["masked_lm"])[-1] == Rule("masked_lm/b", "b", False)


def test_assign_copies_every_tensor():
    _, weights, _, rules, source, values = _table_and_source()
    weight_map.assign_from(source, rules, weights)
    for rule in rules:
        np.testing.assert_array_equal(weights[rule.target].numpy(), values[rule.source])
    exported = weight_map.export_to(rules, weights)
    assert sorted(exported) == sorted(values)


def test_model_weight_without_rule_is_named():
    _, weights, table, _, source, _ = _table_and_source()
    table = [rule for rule in table if rule.target != "pooler/bias"]
    rules = weight_map.expand(table, CONFIG.num_hidden_layers)
    with pytest.raises(ValueError, match=r"no tensor maps to model weight\(s\) \['pooler/bias'\]"):
        weight_map.assign_from(source, rules, weights, ignored=["src/pooler/bias"])
    with pytest.raises(ValueError, match=r"\['pooler/bias'\]"):
        weight_map.export_to(rules, weights)


def test_failed_check_assigns_nothing():
    _, weights, _, rules, source, _ = _table_and_source()
    before = {name: w.numpy().copy() for name, w in weights.items()}
    source.shapes["src/pooler/bias"] = (5,)  # checked after most others
    with pytest.raises(ValueError, match=r"`src/pooler/bias` has shape \[5\]"):
        weight_map.assign_from(source, rules, weights)
    for name, weight in weights.items():
        np.testing.assert_array_equal(weight.numpy(), before[name])


def test_transposed_tensor_shape_error_reads_in_stored_layout():
    _, weights, _, _, _, _ = _table_and_source()
    rule = Rule("layer_0/intermediate/kernel", "w", True)  # stored [out, in] = [6, 4]
    source = weight_map.TensorSource({"w": (4, 6)}, None, "mem")
    with pytest.raises(ValueError, match=r"`w` has shape \[4, 6\] \(stored transposed\), "
                                         r"but the config needs \[6, 4\]"):
        weight_map.assign_from(source, [rule], {rule.target: weights[rule.target]})
