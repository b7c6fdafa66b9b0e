"""Reads a Model Garden BERT (encoder and masked-LM head) into bert_tf layers.

Each tensor is found by the object that owns it in the checkpoint's object graph (`layout`),
through one name-map table from our weight paths to object paths: the Model Garden
`BertEncoder`'s attributes (`_embedding_layer`, `_transformer_layers/<i>/_attention_layer/
_query_dense`, ...), the same in its functional (V1) and layer (V2) classes, and
`MaskedLM`'s (`dense`, `layer_norm`, `bias`). Attention kernels are stored per head
(`EinsumDense`: query `[H, N, H/N]`, output `[N, H/N, H]`); they are checked against the
config's head count, then flattened to our `[H, H]`.

Model Garden's `hidden_act: gelu` is the tanh approximation (`tf_utils.get_activation`), so
it is read as `gelu_new`.
"""

import os

from absl import logging

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.model_dir import CONFIG_NAME
from bert_tf.checkpoints.model_garden.layout import (
    NAME,
    NEXT_SENTENCE_POOLER_KEY,
    checkpoint_layout,
    read_config,
)
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.checkpoints.weight_map import LAYER, Rule, dense_rules, norm_rules
from bert_tf.errors import CheckpointError
from bert_tf.tokenization.vocab import load_vocab

# The object paths below the encoder / masked-LM nodes (`layout.Layout`).
_ENCODER, _MASKED_LM = "encoder/", "masked_lm/"
_BLOCK = f"{_ENCODER}_transformer_layers/{LAYER}/"
_ATTENTION = f"{_BLOCK}_attention_layer/"
_NEXT_SENTENCE_POOLER = NEXT_SENTENCE_POOLER_KEY + "/"
# Root objects whose variables are no model weights: bookkeeping and the optimizer.
_IGNORED_ROOTS = ("save_counter", "global_step", "optimizer")




# Our weight path <- the owning object's path in a Model Garden checkpoint.
TABLE = (
    Rule("embeddings/word_embeddings/embeddings", f"{_ENCODER}_embedding_layer/embeddings",
         False),
    Rule("embeddings/position_embeddings", f"{_ENCODER}_position_embedding_layer/embeddings",
         False),
    Rule("embeddings/token_type_embeddings/embeddings",
         f"{_ENCODER}_type_embedding_layer/embeddings", False),
    *norm_rules("embeddings/layer_norm", f"{_ENCODER}_embedding_norm_layer"),
    *dense_rules(f"layer_{LAYER}/attention/query", f"{_ATTENTION}_query_dense"),
    *dense_rules(f"layer_{LAYER}/attention/key", f"{_ATTENTION}_key_dense"),
    *dense_rules(f"layer_{LAYER}/attention/value", f"{_ATTENTION}_value_dense"),
    *dense_rules(f"layer_{LAYER}/attention/output", f"{_ATTENTION}_output_dense"),
    *norm_rules(f"layer_{LAYER}/attention_layer_norm", f"{_BLOCK}_attention_layer_norm"),
    *dense_rules(f"layer_{LAYER}/intermediate", f"{_BLOCK}_intermediate_dense"),
    *dense_rules(f"layer_{LAYER}/output", f"{_BLOCK}_output_dense"),
    *norm_rules(f"layer_{LAYER}/output_layer_norm", f"{_BLOCK}_output_layer_norm"),
    *dense_rules("pooler", f"{_ENCODER}_pooler_layer"),
    *dense_rules("masked_lm/transform", f"{_MASKED_LM}dense"),
    *norm_rules("masked_lm/layer_norm", f"{_MASKED_LM}layer_norm"),
    Rule("masked_lm/output_bias", f"{_MASKED_LM}bias", False),
)
# The masked LM's output embedding: the encoder's word embeddings, tied.
_TIED_EMBEDDING = f"{_MASKED_LM}embedding_table"


def _attention_shapes(config):
    """{object path suffix: the per-head shape Model Garden stores} of attention weights."""
    h, n, d = config.hidden_size, config.num_attention_heads, config.head_size
    shapes = {f"_{name}_dense/kernel": (h, n, d) for name in ("query", "key", "value")}
    shapes.update({f"_{name}_dense/bias": (n, d) for name in ("query", "key", "value")})
    shapes["_output_dense/kernel"] = (n, d, h)
    return shapes


def _source(layout, rules, config, prefix, skipped):
    """The `TensorSource` of the checkpoint: the table's objects under their table paths
    (attention weights flattened to `[H, H]`), every other variable but the `skipped` nodes
    under its graph path (so that `weight_map.translate` names it as unused)."""
    graph = layout.graph
    roots = {_ENCODER: layout.encoder, _MASKED_LM: layout.masked_lm,
             _NEXT_SENTENCE_POOLER: layout.next_sentence_pooler}
    nodes = {}
    for rule in rules:
        root = next(name for name in roots if rule.source.startswith(name))
        node = graph.find(roots[root], rule.source[len(root):])
        if node is not None and graph.variable_key(node) is not None:
            nodes[rule.source] = node
    if layout.masked_lm is not None:
        tied = graph.find(layout.masked_lm, _TIED_EMBEDDING[len(_MASKED_LM):])
        if tied != nodes.get(TABLE[0].source):
            raise CheckpointError(f"Checkpoint {prefix}: the masked LM's `embedding_table` is "
                                  "not the encoder's word embeddings; bert_tf ties them.")
    per_head = _attention_shapes(config)
    shapes, stored = {}, {}
    for name, node in nodes.items():
        shape = graph.shape(node)
        suffix = name.split("_attention_layer/")[-1]
        if "_attention_layer/" in name and suffix in per_head:
            if shape != per_head[suffix]:
                raise CheckpointError(
                    f"Checkpoint {prefix}: tensor `{name}` has shape {list(shape)}, but the "
                    f"config (num_attention_heads {config.num_attention_heads}) needs "
                    f"{list(per_head[suffix])}.")
            stored[name] = shape
            shape = (config.hidden_size,) if suffix.endswith("bias") else (config.hidden_size,
                                                                          config.hidden_size)
        shapes[name] = shape
    used = set(nodes.values()) | set(skipped)
    for path, node in graph.variables(graph.ROOT).items():
        if node not in used:
            shapes[path] = graph.shape(node)
            nodes[path] = node

    def read(name):
        value = graph.read(nodes[name])
        return value.reshape(shapes[name]) if name in stored else value

    return weight_map.TensorSource(shapes, read, where=prefix)


def _pooler_rules(rules, layout, prefix, copy_pooler_dense_to_encoder):
    """`rules` with the pooler read from where the caller chose, and the pooler nodes left
    unread (logged).

    Model Garden's BERT pretraining trains `next_sentence.pooler_dense` (its next-sentence
    head pools [CLS] itself) and leaves the encoder's pooler as initialised; its TF Hub export
    copies that dense layer into the encoder when asked (`copy_pooler_dense_to_encoder`).
    """
    graph = layout.graph
    nsp_pooler = layout.next_sentence_pooler
    if copy_pooler_dense_to_encoder and nsp_pooler is None:
        raise CheckpointError(f"Checkpoint {prefix} holds no `{NEXT_SENTENCE_POOLER_KEY}` to "
                              "copy into the encoder's pooler (copy_pooler_dense_to_encoder).")
    if nsp_pooler is None:
        return rules, []
    if not copy_pooler_dense_to_encoder:
        logging.warning("%s: `%s` is not read, the encoder's own pooler is (as Model Garden's "
                        "BertEncoder computes pooled_output); pass "
                        "copy_pooler_dense_to_encoder=True for the pooler its next-sentence "
                        "task trained.", prefix, NEXT_SENTENCE_POOLER_KEY)
        return rules, list(graph.variables(nsp_pooler).values())
    pooler = f"{_ENCODER}_pooler_layer/"
    logging.info("%s: the pooler is read from `%s`.", prefix, NEXT_SENTENCE_POOLER_KEY)
    rules = [rule._replace(source=rule.source.replace(pooler, _NEXT_SENTENCE_POOLER))
             for rule in rules]
    return rules, list(graph.variables(graph.find(layout.encoder, pooler[len(_ENCODER):-1]))
                       .values())


def read_weights(layout, config, prefix, copy_pooler_dense_to_encoder=False,
                 config_file=CONFIG_NAME):
    """Our encoder's and masked-LM head's (where the checkpoint has one) weights, from `layout`.

    Args:
      copy_pooler_dense_to_encoder: read the pooler from the next-sentence head's
        `pooler_dense` instead of the encoder's (Model Garden's export option of that name).
      config_file: the file `config` came from, named if it is too big to build.

    Returns:
      {our weight path: numpy array} (`weight_map.translate`).

    Raises:
      CheckpointError: an embedding projection, tensors missing, left over (named), shaped
        unlike the config or not finite; no `pooler_dense` to copy.
    """
    if "_embedding_projection" in layout.graph.children(layout.encoder):
        raise CheckpointError(f"Checkpoint {prefix}: the encoder has an embedding projection "
                              "(`embedding_width` unlike `hidden_size`); bert_tf's encoder "
                              "has none.")
    heads = ["masked_lm"] if layout.masked_lm is not None else []
    shapes = weight_map.expected_shapes(config, heads, where=config_file)
    rules, skipped = _pooler_rules(weight_map.expand(TABLE, config.num_hidden_layers, heads),
                                   layout, prefix, copy_pooler_dense_to_encoder)
    source = _source(layout, rules, config, prefix, skipped)
    ignored = [name for name in source.shapes if name.split("/")[0] in _IGNORED_ROOTS]
    weights = weight_map.translate(source, rules, shapes, ignored=ignored)
    logging.info("Read %d tensors from %s (layout %s, heads: %s).", len(rules), prefix,
                 layout.name, heads or "none")
    return weights


def read(path, do_lower_case=None, copy_pooler_dense_to_encoder=False):
    """The encoder and masked-LM head (where held) as a `Pretrained`.

    Args:
      copy_pooler_dense_to_encoder: take the pooler from the next-sentence head's
        `next_sentence.pooler_dense` (the one Model Garden's BERT pretraining trains), as
        Model Garden's TF Hub export does under that name; by default the encoder's own, so
        `pooled_output` equals Model Garden's `BertEncoder`'s.

    Raises:
      FileNotFoundError: no `vocab.txt`.
      CheckpointError: no encoder, an embedding projection, or tensors missing, left over,
        shaped unlike `bert_config.json` or not finite (named).
    """
    folder, prefix, layout = checkpoint_layout(path)
    config = read_config(folder)
    vocab_file = os.path.join(folder, model_dir_lib.VOCAB_NAME)
    if not os.path.isfile(vocab_file):
        raise FileNotFoundError(f"{folder} has no {model_dir_lib.VOCAB_NAME}: the WordPiece "
                                "vocabulary is needed to tokenize text.")
    vocab = FolderVocab(load_vocab(vocab_file), vocab_file)  # Model Garden records no casing
    weights = read_weights(layout, config, prefix, copy_pooler_dense_to_encoder,
                           os.path.join(folder, model_dir_lib.CONFIG_NAME))
    return Pretrained(NAME, os.fspath(path), config, weights,
                      "pretrainer" if layout.masked_lm is not None else "encoder", vocab,
                      vocab.choose_lower_case(do_lower_case),
                      model_info={"model_garden_layout": layout.name})
