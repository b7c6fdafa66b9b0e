"""The shared name-map helper: coverage of every weight, checks before values, and the
shapes it checks against equal to what the models hold."""

import numpy as np
import pytest

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.configs import BertConfig
from bert_tf.models import BertEncoder, BertPretrainer

CONFIG = BertConfig(vocab_size=11, hidden_size=4, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=6, max_position_embeddings=5)


def _table_and_source():
    """A table covering every encoder weight, and a source holding a value for each."""
    weights = weight_map.expected_shapes(CONFIG)
    generic = {name.replace("layer_1/", f"layer_{LAYER}/") for name in weights
               if not name.startswith("layer_0/")}
    table = [Rule(name, "src/" + name, False) for name in sorted(generic)]
    rules = weight_map.expand(table, CONFIG.num_hidden_layers)
    rng = np.random.default_rng(0)
    values = {rule.source: rng.normal(size=weights[rule.target]).astype("f4") for rule in rules}
    source = weight_map.TensorSource({k: v.shape for k, v in values.items()}, values.get, "mem")
    return weights, table, rules, source, values


def test_expand_fills_layers_and_drops_absent_heads():
    table = [Rule(f"layer_{LAYER}/x", f"l.{LAYER}.x", True), Rule("masked_lm/b", "b", False)]
    assert weight_map.expand(table, 2) == [Rule("layer_0/x", "l.0.x", True),
                                           Rule("layer_1/x", "l.1.x", True)]
    assert weight_map.expand(table, 1, heads=["masked_lm"])[-1] == Rule("masked_lm/b", "b", False)


@pytest.mark.parametrize("heads, num_labels", [((), None), (("masked_lm",), 3),
                                               (("masked_lm", "next_sentence"), None)])
def test_expected_shapes_are_the_models(heads, num_labels):
    encoder = BertEncoder(CONFIG)
    layers = [encoder]
    if heads:
        items = BertPretrainer(encoder, use_next_sentence="next_sentence" in heads
                               ).checkpoint_items()
        layers += [layer for key, layer in items.items() if key != "encoder"]
    built = {path: tuple(weight.shape)
             for path, weight in weight_map.model_weights(*layers).items()}
    if num_labels is not None:
        built.update({"head/kernel": (CONFIG.hidden_size, num_labels), "head/bias": (num_labels,)})
    assert weight_map.expected_shapes(CONFIG, heads, num_labels) == built


def test_translate_reads_every_tensor_and_export_writes_it_back():
    _, _, rules, source, values = _table_and_source()
    weights = weight_map.translate(source, rules, weight_map.expected_shapes(CONFIG))
    for rule in rules:
        np.testing.assert_array_equal(weights[rule.target], values[rule.source])
    exported = weight_map.export_to(rules, weights)
    assert sorted(exported) == sorted(values)
    encoder = BertEncoder.from_weights(CONFIG, weights)
    for path, variable in weight_map.model_weights(encoder).items():
        np.testing.assert_array_equal(variable.numpy(), weights[path])


def test_model_weight_without_rule_is_named():
    weights, table, _, source, _ = _table_and_source()
    table = [rule for rule in table if rule.target != "pooler/bias"]
    rules = weight_map.expand(table, CONFIG.num_hidden_layers)
    with pytest.raises(ValueError, match=r"no tensor maps to model weight\(s\) \['pooler/bias'\]"):
        weight_map.translate(source, rules, weights, ignored=["src/pooler/bias"])
    with pytest.raises(ValueError, match=r"\['pooler/bias'\]"):
        weight_map.export_to(rules, weights)


def test_shapes_are_checked_before_any_value_is_read():
    weights, _, rules, source, values = _table_and_source()
    read = []
    source.read = lambda name: read.append(name) or values[name]
    source.shapes["src/pooler/bias"] = (5,)  # checked after most others
    with pytest.raises(ValueError, match=r"`src/pooler/bias` has shape \[5\]"):
        weight_map.translate(source, rules, weights)
    assert read == []


def test_transposed_tensor_shape_error_reads_in_stored_layout():
    weights, _, _, _, _ = _table_and_source()
    rule = Rule("layer_0/intermediate/kernel", "w", True)  # stored [out, in] = [6, 4]
    source = weight_map.TensorSource({"w": (4, 6)}, None, "mem")
    with pytest.raises(ValueError, match=r"`w` has shape \[4, 6\] \(stored transposed\), "
                                         r"but the config needs \[6, 4\]"):
        weight_map.translate(source, [rule], {rule.target: weights[rule.target]})
