"""Name-map tables between our weights and other checkpoint formats, applied strictly.

Each converter (Hugging Face, google-research) declares ONE table of `Rule`s: our weight
path (as `variable.path` spells it, e.g. `layer_{layer}/attention/query/kernel`), the
checkpoint's tensor name, and whether the tensor is stored transposed. This module expands
the table over the layers and applies it in either direction with the checks every
converter needs: each tensor's shape is checked against the shapes the config implies
(`expected_shapes`), every source tensor must be used and every weight filled, each named
in the error. Reading gives numpy arrays under our paths (`translate`), never a model: the
models take them (`models/named_weights.py`).
"""

import collections
import math
import sys

import numpy as np

from bert_tf.checkpoints import model_size
from bert_tf.errors import CheckpointError

LAYER = "{layer}"
_NAMED = 10  # missing tensors named one by one; the rest counted
# Weights a config may describe beyond twice what its files hold (tiny test models).
_SIZE_SLACK = 1 << 20

# Our weight groups that belong to pretraining heads (checkpoint keys of BertPretrainer);
# the rest (`embeddings`, `layer_N`, `pooler`) are the encoder's; a task head's is `head`.
HEAD_GROUPS = ("masked_lm", "next_sentence")
TASK_HEAD = "head"

Rule = collections.namedtuple("Rule", ["target", "source", "transpose"])

# How a checkpoint format spells BERT's tensors: the separator, where the embeddings, the
# layer blocks and the masked-LM transform live, and the leaf names of dense and LayerNorm
# weights (with whether a dense kernel is stored transposed, as PyTorch's `[out, in]` is).
Spelling = collections.namedtuple("Spelling", [
    "sep", "embeddings", "block", "pooler", "transform", "embedding_leaf", "kernel", "bias",
    "gamma", "beta", "transposed_kernel"])


def dense_rules(target, source, kernel="kernel", bias="bias", sep="/", transposed=False):
    """The two rules of a dense layer: our `target/kernel` and `target/bias` <- the source's
    `source{sep}{kernel}` and `source{sep}{bias}` (every format's tables share it)."""
    return (Rule(f"{target}/kernel", f"{source}{sep}{kernel}", transposed),
            Rule(f"{target}/bias", f"{source}{sep}{bias}", False))


def norm_rules(target, source, gamma="gamma", beta="beta", sep="/"):
    """The two rules of a LayerNorm: our `target/gamma` and `target/beta`."""
    return (Rule(f"{target}/gamma", f"{source}{sep}{gamma}", False),
            Rule(f"{target}/beta", f"{source}{sep}{beta}", False))


def bert_rules(spelling):
    """The rules of every tensor that both formats name alike: embeddings, blocks, pooler,
    masked-LM transform (each converter adds its own output-bias and NSP rules)."""
    sp = spelling

    def dense(target, source):
        return dense_rules(target, source, sp.kernel, sp.bias, sp.sep, sp.transposed_kernel)

    def norm(target, source):
        return norm_rules(target, source, sp.gamma, sp.beta, sp.sep)

    def embedding(target, name):
        return Rule(target, f"{sp.embeddings}{sp.sep}{name}{sp.embedding_leaf}", False)

    def block(*names):
        return sp.block + sp.sep + sp.sep.join(names)

    layer = f"layer_{LAYER}"
    return (
        embedding("embeddings/word_embeddings/embeddings", "word_embeddings"),
        embedding("embeddings/position_embeddings", "position_embeddings"),
        embedding("embeddings/token_type_embeddings/embeddings", "token_type_embeddings"),
        *norm("embeddings/layer_norm", f"{sp.embeddings}{sp.sep}LayerNorm"),
        *dense(f"{layer}/attention/query", block("attention", "self", "query")),
        *dense(f"{layer}/attention/key", block("attention", "self", "key")),
        *dense(f"{layer}/attention/value", block("attention", "self", "value")),
        *dense(f"{layer}/attention/output", block("attention", "output", "dense")),
        *norm(f"{layer}/attention_layer_norm", block("attention", "output", "LayerNorm")),
        *dense(f"{layer}/intermediate", block("intermediate", "dense")),
        *dense(f"{layer}/output", block("output", "dense")),
        *norm(f"{layer}/output_layer_norm", block("output", "LayerNorm")),
        *dense("pooler", sp.pooler),
        *dense("masked_lm/transform", f"{sp.transform}{sp.sep}dense"),
        *norm("masked_lm/layer_norm", f"{sp.transform}{sp.sep}LayerNorm"),
    )


class TensorSource:
    """Named tensors of a checkpoint: their shapes up front, values read on demand.

    Args:
      shapes: dict of tensor name to shape tuple.
      read: function of a name returning the tensor as a numpy array.
      where: the checkpoint's path, for error messages.
      labels: optional dict of tensor name to the name the file spells it with (a TF `.h5`
        name for a translated key), for error messages.

    Example:
    >>> tensors = {"pooler.dense.bias": np.zeros([8], np.float32)}
    >>> source = TensorSource({k: v.shape for k, v in tensors.items()}, tensors.get, "mem")
    >>> source.shapes
    {'pooler.dense.bias': (8,)}
    """

    def __init__(self, shapes, read, where, labels=None):
        self.shapes = {name: tuple(shape) for name, shape in shapes.items()}
        self.read = read
        self.where = where
        self.labels = labels or {}

    def label(self, name):
        """`name` as the file spells it, for messages."""
        return self.labels.get(name, name)


def model_weights(*layers):
    """Our weights by path, e.g. `embeddings/word_embeddings/embeddings`, over `layers`.

    Tied weights (the masked-LM head reuses the word embeddings) appear once.
    """
    weights = {}
    for layer in layers:
        for variable in layer.weights:
            if weights.setdefault(variable.path, variable) is not variable:
                raise ValueError(f"Two model weights share the path `{variable.path}`; "
                                 "build the encoder outside any other layer's name scope.")
    return weights


def expected_shapes(config, heads=(), num_labels=None, where="config", source=None):
    """{our weight path: shape} of the encoder of `config`, the pretraining `heads` and a task
    head of `num_labels` outputs: what a reader's tensors must fill (the paths and shapes
    `BertEncoder`, `BertPretrainer.checkpoint_items()` and a `Dense` named `head` hold;
    tests/checkpoints/test_weight_map.py holds them equal).

    Every reader asks here before reading values, so a config too big for the machine is
    refused first (`model_size`), naming `where`; given the `source` the shapes are for, a
    config that describes far more weights than it holds too (`check_stored_size`), before
    its layers are expanded.

    Raises:
      CheckpointError: weights that would not fit in memory or that the source does not
        hold, or a next-sentence head without the masked-LM head.
    """
    model_size.check_fits_memory(config, heads, where)
    if source is not None:
        check_stored_size(source, model_size.count_parameters(config, heads, num_labels))
    if heads and "masked_lm" not in heads:
        raise CheckpointError("A next-sentence head needs the masked-LM head too; found only "
                              f"{list(heads)}.")
    hidden, inner = config.hidden_size, config.intermediate_size

    def dense(name, units, inputs=hidden):
        return {f"{name}/kernel": (inputs, units), f"{name}/bias": (units,)}

    def norm(name):
        return {f"{name}/gamma": (hidden,), f"{name}/beta": (hidden,)}

    shapes = {"embeddings/word_embeddings/embeddings": (config.vocab_size, hidden),
              "embeddings/position_embeddings": (config.max_position_embeddings, hidden),
              "embeddings/token_type_embeddings/embeddings": (config.type_vocab_size, hidden),
              **norm("embeddings/layer_norm"), **dense("pooler", hidden)}
    for i in range(config.num_hidden_layers):
        for name in ("query", "key", "value", "output"):
            shapes.update(dense(f"layer_{i}/attention/{name}", hidden))
        shapes.update(norm(f"layer_{i}/attention_layer_norm"))
        shapes.update(dense(f"layer_{i}/intermediate", inner))
        shapes.update(dense(f"layer_{i}/output", hidden, inner))
        shapes.update(norm(f"layer_{i}/output_layer_norm"))
    if "masked_lm" in heads:
        shapes.update(dense("masked_lm/transform", hidden), **norm("masked_lm/layer_norm"))
        shapes["masked_lm/output_bias"] = (config.vocab_size,)
    if "next_sentence" in heads:
        shapes.update(dense("next_sentence", 2))
    if num_labels is not None:
        shapes.update(dense(TASK_HEAD, num_labels))
    return shapes


def expand(table, num_layers, heads=()):
    """The table's rules with `{layer}` filled in, keeping head rules only for `heads`."""
    rules = []
    for rule in table:
        group = rule.target.split("/")[0]
        if group in HEAD_GROUPS and group not in heads:
            continue
        if LAYER in rule.target:
            rules.extend(
                Rule(rule.target.format(layer=i), rule.source.format(layer=i), rule.transpose)
                for i in range(num_layers))
        else:
            rules.append(rule)
    return rules


def _check_covered(rules, weights, what):
    unset = sorted(set(weights) - {rule.target for rule in rules})
    if unset:
        raise ValueError(f"{what}: no tensor maps to model weight(s) {unset}.")
    unknown = sorted({rule.target for rule in rules} - set(weights))
    if unknown:
        raise ValueError(f"{what}: the model has no weight(s) {unknown}.")


def check_stored_size(source, needed):
    """Refuses a config that describes `needed` weights, far more than `source`'s files hold.

    `translate` asks before it looks at any tensor; `expected_shapes`, given the source,
    before it expands the config's layers. A lying config (100,000 layers, a 40M
    vocab, 10^12 classes beside a small checkpoint) is then one line, whatever the machine's
    memory.
    """
    stored = sum(math.prod(shape) for shape in source.shapes.values())
    if needed > 2 * stored + _SIZE_SLACK:
        raise CheckpointError(
            f"Checkpoint {source.where}: the config describes {needed:,} weights, but the files "
            f"hold {stored:,}; the config does not belong to these weights (check its sizes: "
            "num_hidden_layers, vocab_size, max_position_embeddings, the head's classes).")


def translate(source, rules, shapes, ignored=()):
    """`source`'s tensors as our weights, by `rules`: {our weight path: numpy array}.

    Every shape is checked before any value is read, and every value after.

    Args:
      source: a `TensorSource`.
      rules: expanded `Rule`s (see `expand`).
      shapes: {our weight path: shape} the rules must fill (see `expected_shapes`).
      ignored: source tensor names that carry no weights (buffers, optimizer slots).

    Raises:
      CheckpointError: a tensor is missing, has the wrong shape, holds NaN or Inf, or is left
        unused, or a model weight is left unset; the message names them.
    """
    where = source.where
    check_stored_size(source, sum(math.prod(shape) for shape in shapes.values()))
    _check_covered(rules, shapes, f"Checkpoint {where}")
    missing = [f"{source.label(rule.source)} (for {rule.target})" for rule in rules
               if rule.source not in source.shapes]
    if missing:
        named = missing[:_NAMED] + ([f"... {len(missing) - _NAMED} more"]
                                    if len(missing) > _NAMED else [])
        raise CheckpointError(f"Checkpoint {where} lacks tensor(s) {named}, so these model "
                         "weights would be left unset (check num_hidden_layers in the config).")
    unused = sorted(source.label(name) for name in
                    set(source.shapes) - {rule.source for rule in rules} - set(ignored))
    if unused:
        raise CheckpointError(f"Checkpoint {where} has tensor(s) that map to no model weight: "
                         f"{unused}.")
    for rule in rules:
        expected = tuple(shapes[rule.target])
        found = source.shapes[rule.source]
        stored = found[::-1] if rule.transpose else found
        if stored != expected:
            layout = " (stored transposed)" if rule.transpose else ""
            raise CheckpointError(
                f"Checkpoint {where}: tensor `{source.label(rule.source)}` has shape "
                f"{list(found)}{layout}, "
                f"but the config needs {list(expected[::-1] if rule.transpose else expected)} "
                f"for weight `{rule.target}`.")
    values = {}
    for rule in rules:
        value = _read(source, rule.source, where)
        if not np.isfinite(value.astype(np.float32)).all():
            raise CheckpointError(f"Checkpoint {where}: tensor `{source.label(rule.source)}` holds "
                                  "NaN or Inf values; nothing was converted (convert a checkpoint "
                                  "saved before training diverged).")
        values[rule.target] = value.T if rule.transpose else value
    return values


def _read(source, name, where):
    """A tensor's value; a file that fails to give it is named as damaged."""
    tensorflow = sys.modules.get("tensorflow")  # TensorFlow's reader raises its own errors
    read_errors = (OSError, IndexError, RuntimeError, *(
        (tensorflow.errors.OpError,) if tensorflow else ()))
    try:
        return np.asarray(source.read(name))
    except read_errors as error:
        reason = str(error).strip().split("\n")[0] or type(error).__name__
        raise CheckpointError(f"Checkpoint {where}: cannot read tensor `{source.label(name)}` "
                              f"({reason}): a damaged or partly written file (an interrupted "
                              "download?); download or write it again.") from None


def export_to(rules, weights):
    """Our weights (variables or arrays, by path) as a dict of checkpoint tensor names to
    float32 numpy arrays."""
    _check_covered(rules, weights, "Export")
    tensors = {}
    for rule in rules:
        value = weights[rule.target]
        value = np.asarray(value.numpy() if hasattr(value, "numpy") else value, np.float32)
        tensors[rule.source] = np.ascontiguousarray(value.T if rule.transpose else value)
    return tensors
