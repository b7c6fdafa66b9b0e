"""A Model Garden checkpoint recognised and described: where it keeps its encoder and heads.

Model Garden (tensorflow/models, `official/nlp`) saves BERTs as TF2 object-based checkpoints
beside `bert_config.json` and `vocab.txt`, in three layouts its
`tf2_bert_encoder_checkpoint_converter` writes and its pretraining exports:
  encoder     `tf.train.Checkpoint(encoder=BertEncoder)`: the published v3 BERTs;
  model       `tf.train.Checkpoint(model=BertEncoder)`: older ones;
  pretrainer  a `BertPretrainerV2` saved with its `checkpoint_items` (`encoder`,
              `masked_lm`, `<head>.pooler_dense` per classification head), often with the
              pretrainer itself under `model` (or under `encoder`: the converter's
              `--converted_model=pretrainer` with its default `--checkpoint_model_name`).
A node is told by its children: a `BertEncoder` holds `_transformer_layers` and
`_embedding_layer`, a `BertPretrainerV2` its `encoder_network` and `masked_lm`.
"""

import collections
import glob
import os

import tensorflow as tf

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.model_garden.object_graph import read_object_graph
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object

NAME = "model_garden"
TITLE = "Model Garden TF2 checkpoint"
# bert_config.json keys that Model Garden's `BertConfig` writes beside google-research's.
EMBEDDING_SIZE = "embedding_size"
_MODEL_GARDEN_KEYS = (EMBEDDING_SIZE, "backward_compatible")
# Model Garden's class of each layout's model.
_ARCHITECTURES = {"encoder": "BertEncoder", "model": "BertEncoder",
                  "pretrainer": "BertPretrainerV2"}
# The root objects a checkpoint may keep its model under, in the order they are tried.
MODEL_KEYS = ("encoder", "model")
MASKED_LM_KEY = "masked_lm"
# Model Garden's BERT pretraining names its next-sentence classification head so.
NEXT_SENTENCE_POOLER_KEY = "next_sentence.pooler_dense"

Layout = collections.namedtuple("Layout", [
    "graph", "name", "encoder", "masked_lm", "next_sentence_pooler"])
Layout.__doc__ = """What a Model Garden checkpoint holds.

Attributes:
  graph: its `ObjectGraph`.
  name: `encoder`, `model` or `pretrainer`.
  encoder: the BertEncoder's node.
  masked_lm: the masked-LM head's node, or None.
  next_sentence_pooler: the next-sentence head's `pooler_dense` node, or None.
"""


def find_prefix(path):
    """The TF checkpoint prefix of `path` (a folder or a prefix), or None when it has none.

    A folder's one `*.index` file names it; with several, its `checkpoint` state file.

    Raises:
      CheckpointError: several checkpoints and no state file to choose one.
    """
    path = os.fspath(path)
    if os.path.isfile(path + ".index"):
        return path
    if not os.path.isdir(path):
        return None
    indexes = sorted(glob.glob(os.path.join(glob.escape(path), "*.index")))
    if len(indexes) <= 1:
        return indexes[0][:-len(".index")] if indexes else None
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
        raise CheckpointError(f"{path} holds several checkpoints "
                              f"{[os.path.basename(i) for i in indexes]} and no `checkpoint` "
                              "file naming the one to read; pass its prefix.")
    return latest


def _is_encoder(graph, node):
    return {"_transformer_layers", "_embedding_layer"} <= set(graph.children(node))


def _holdings(graph):
    """Names of the root's objects, with their variable counts, for messages."""
    return ", ".join(f"{name} ({len(graph.variables(node))} variables)"
                     for name, node in sorted(graph.children(graph.ROOT).items()))


def _find_layout(graph):
    """The `Layout` of a graph holding a Model Garden encoder, else None."""
    root = graph.children(graph.ROOT)
    pretrainer = next((root[key] for key in MODEL_KEYS if key in root
                       and "encoder_network" in graph.children(root[key])), None)
    encoder = next((root[key] for key in MODEL_KEYS
                    if key in root and _is_encoder(graph, root[key])), None)
    if encoder is None and pretrainer is not None:
        encoder = graph.find(pretrainer, "encoder_network")
    if encoder is None or not _is_encoder(graph, encoder):
        return None
    masked_lm = root.get(MASKED_LM_KEY)
    if masked_lm is None and pretrainer is not None:
        masked_lm = graph.find(pretrainer, "masked_lm")
    if pretrainer is not None or masked_lm is not None:
        name = "pretrainer"
    else:
        name = next(key for key in MODEL_KEYS if root.get(key) == encoder)
    return Layout(graph, name, encoder, masked_lm, root.get(NEXT_SENTENCE_POOLER_KEY))


def _no_encoder(prefix, graph):
    return CheckpointError(
        f"{prefix}: a TF2 checkpoint with no Model Garden BERT encoder in its object graph "
        f"(no `encoder` or `model` holding one); it holds {_holdings(graph) or 'nothing'}.")


def _read(prefix):
    """`(graph or None for TF1, Layout or None)` of the checkpoint at `prefix`."""
    graph = read_object_graph(prefix)
    return graph, None if graph is None else _find_layout(graph)


def recognised_layout(prefix):
    """The `Layout` of the checkpoint at `prefix` when it holds a Model Garden encoder; None
    for a TF1 (name-based) checkpoint or another library's model under `encoder`/`model`.

    Raises:
      CheckpointError: damaged, or an object graph with neither `encoder`, `model` nor
        `masked_lm` (what it holds is named).
    """
    graph, layout = _read(prefix)
    if (graph is not None and layout is None
            and not set(graph.children(graph.ROOT)) & {*MODEL_KEYS, MASKED_LM_KEY}):
        raise _no_encoder(prefix, graph)
    return layout


def read_layout(prefix):
    """The `Layout` of the checkpoint at `prefix`.

    Raises:
      CheckpointError: damaged, TF1, or no Model Garden encoder (what it holds is named).
    """
    graph, layout = _read(prefix)
    if graph is None:
        raise CheckpointError(f"{prefix}: a TF1 (name-based) checkpoint, not a Model Garden "
                              "TF2 one.")
    if layout is None:
        raise _no_encoder(prefix, graph)
    return layout


def _checkpoint(path):
    """`(folder, prefix)` of a Model Garden candidate: `bert_config.json` beside a TF
    checkpoint that is not a model directory's `model.ckpt`; else None."""
    path = os.fspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    if not os.path.isfile(os.path.join(folder, model_dir_lib.CONFIG_NAME)):
        return None
    prefix = find_prefix(path)
    if prefix is None or os.path.basename(prefix) == model_dir_lib.CHECKPOINT_PREFIX:
        return None
    return os.path.dirname(prefix), prefix


def recognise(path):
    """`bert_config.json` beside a TF2 checkpoint whose object graph holds a Model Garden
    `BertEncoder` (or `BertPretrainerV2`) under `encoder` or `model`.

    Reads the checkpoint's index and object graph, no weights.

    Raises:
      CheckpointError: an object-based checkpoint beside `bert_config.json` with neither
        `encoder`, `model` nor `masked_lm`: what it holds is named.
    """
    found = _checkpoint(path)
    if found is None:
        return False
    return recognised_layout(found[1]) is not None


def checkpoint_layout(path):
    folder, prefix = _checkpoint(path)
    return folder, prefix, read_layout(prefix)


def read_config(folder):
    """The `BertConfig` of a Model Garden folder's `bert_config.json`.

    Raises:
      FileNotFoundError: no `bert_config.json`.
      CheckpointError: an `embedding_size` unlike `hidden_size` (a projection bert_tf's
        encoder lacks); ConfigError: keys or values `BertConfig` refuses.
    """
    path = os.path.join(folder, model_dir_lib.CONFIG_NAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{folder} has no {model_dir_lib.CONFIG_NAME}: the model's "
                                "config is needed.")
    values = read_json_object(path)
    embedding_size = values.get(EMBEDDING_SIZE)
    if embedding_size not in (None, values.get("hidden_size")):
        raise CheckpointError(
            f"{path}: `embedding_size={embedding_size}` differs from `hidden_size="
            f"{values.get('hidden_size')}`; bert_tf's encoder has no embedding projection.")
    values = {key: value for key, value in values.items() if key not in _MODEL_GARDEN_KEYS}
    if values.get("hidden_act", "gelu") == "gelu":  # Model Garden's gelu is the tanh form
        values["hidden_act"] = "gelu_new"
    return BertConfig.from_dict(values, source=path)


def describe(path):
    """The layout, its model class and heads, and the vocab, from the object graph; the
    position table's length from `bert_config.json` (`read` checks the table against it)."""
    folder, prefix, layout = checkpoint_layout(path)
    vocab = os.path.join(folder, model_dir_lib.VOCAB_NAME)
    positions = read_json_object(
        os.path.join(folder, model_dir_lib.CONFIG_NAME)).get("max_position_embeddings")
    return FolderDescription(
        os.fspath(path), NAME, f"{TITLE}, `{layout.name}` layout",
        weights=[os.path.basename(prefix) + ".*"],
        architecture=_ARCHITECTURES[layout.name] + (
            f" + {NEXT_SENTENCE_POOLER_KEY}" if layout.next_sentence_pooler else ""),
        head="pretrainer" if layout.masked_lm is not None else "encoder",
        pretraining_heads=["masked_lm"] if layout.masked_lm is not None else [],
        vocab=vocab if os.path.isfile(vocab) else None,
        max_position_embeddings=positions if isinstance(positions, int) else None,
        config=read_config(folder))
