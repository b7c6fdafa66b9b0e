"""What a TF2 SavedModel holds, read from its files without loading or running it.

A SavedModel folder is `saved_model.pb` (the object graph, the signatures, the traced
functions, the asset file names) and `variables/variables.*`, an object-based TF checkpoint
whose own object graph (`_CHECKPOINTABLE_OBJECT_GRAPH`) gives each variable's checkpoint key
and the name it was created with (`full_name`, e.g.
`transformer/layer_0/self_attention/query/kernel`). Both are parsed with TensorFlow's own
protos and checkpoint reader; `tf.saved_model.load` is never called, so nothing in a
stranger's graph runs and no tf_keras is needed.

Example:
>>> contents = read_saved_model("bert_en_uncased_L-12_H-768_A-12/")   # doctest: +SKIP
>>> contents.variables["pooler_transform/kernel"]                       # doctest: +SKIP
(768, 768)
"""

import collections
import dataclasses
import os

import tensorflow as tf
from google.protobuf.message import DecodeError
from tensorflow.core.protobuf import saved_model_pb2, trackable_object_graph_pb2

from bert_tf.errors import CheckpointError, checkpoint_read_error

SAVED_MODEL_FILE = "saved_model.pb"
VARIABLES_PREFIX = os.path.join("variables", "variables")
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VARIABLE_ATTRIBUTE = "VARIABLE_VALUE"


@dataclasses.dataclass
class SavedModelContents:
    """The parts of a SavedModel the TF Hub reader needs.

    Attributes:
      folder: the SavedModel folder.
      signatures: the signature names (`serving_default`, ...).
      root_children: the names of the root object's attributes (`mlm`, `vocab_file`, ...).
      assets: asset files by the attribute name they hang under (`vocab_file`,
        `sp_model_file`, ...), as paths inside `folder`.
      variables: variable shapes by the name each was created with.
      root_variables: checkpoint keys of variables that are attributes of the root object
        (`do_lower_case`), by attribute name.
      ops: the op types the SavedModel's functions compute with (`Erf`, `CaseFoldUTF8`...).
      keys: checkpoint keys by variable name (for `read`).
      duplicated: names that several variables share (left out of `variables`).
      reader: the variables checkpoint's `tf.train.CheckpointReader` (None without one).
    """

    folder: str
    signatures: list
    root_children: list
    assets: dict
    variables: dict
    root_variables: dict
    ops: frozenset
    keys: dict
    duplicated: frozenset = frozenset()
    reader: object = dataclasses.field(repr=False, default=None)

    @property
    def checkpoint_prefix(self):
        return os.path.join(self.folder, VARIABLES_PREFIX)

    def read(self, name):
        """The value of variable `name` (a key of `variables`) as a numpy array."""
        return self._read_key(self.keys[name])

    def read_root_variable(self, attribute):
        """The value of the root's variable attribute `attribute` (e.g. `do_lower_case`)."""
        return self._read_key(self.root_variables[attribute])

    def _read_key(self, key):
        try:
            return self.reader.get_tensor(key)
        except (IndexError, tf.errors.OpError, ValueError) as error:
            raise checkpoint_read_error(self.checkpoint_prefix, error) from None


def _parse(proto, data, path, what):
    try:
        proto.ParseFromString(data)
    except DecodeError as error:
        raise CheckpointError(f"{path}: not a readable {what} ({error}).") from None
    return proto


def _meta_graph(folder):
    path = os.path.join(folder, SAVED_MODEL_FILE)
    with open(path, "rb") as f:
        proto = _parse(saved_model_pb2.SavedModel(), f.read(), path, "SavedModel")
    if len(proto.meta_graphs) != 1 or not proto.meta_graphs[0].HasField("object_graph_def"):
        raise CheckpointError(
            f"{path}: a TF1 SavedModel or hub.Module ({len(proto.meta_graphs)} graph(s), no "
            "object graph); bert_tf reads TF2 SavedModels (TF Hub BERT versions 3 and up).")
    return proto.meta_graphs[0], path


def _checkpoint_graph(prefix):
    """`(reader, TrackableObjectGraph)` of the SavedModel's variables checkpoint."""
    try:
        reader = tf.train.load_checkpoint(prefix)
        data = reader.get_tensor(_OBJECT_GRAPH_KEY)
    except (IndexError, tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None
    graph = _parse(trackable_object_graph_pb2.TrackableObjectGraph(), data, prefix,
                   "object graph")
    return reader, graph


def _checkpoint_variables(reader, graph, prefix):
    """`(keys, shapes, duplicated)`: checkpoint keys and shapes by variable name, the names
    given to several variables left out (as `duplicated`: they cannot be told apart)."""
    keys = collections.defaultdict(set)
    for node in graph.nodes:
        for attribute in node.attributes:
            if attribute.name == _VARIABLE_ATTRIBUTE:
                keys[attribute.full_name].add(attribute.checkpoint_key)
    duplicated = frozenset(name for name, found in keys.items() if len(found) > 1)
    keys = {name: found.pop() for name, found in keys.items() if name not in duplicated}
    shapes = reader.get_variable_to_shape_map()
    missing = sorted(name for name, key in keys.items() if key not in shapes)
    if missing:
        raise CheckpointError(f"Checkpoint {prefix}: its object graph names variable(s) "
                              f"{missing[:5]} that it does not hold.")
    return keys, {name: tuple(shapes[key]) for name, key in keys.items()}, duplicated


def read_saved_model(folder):
    """Reads the signatures, root attributes, assets, variables and ops of a SavedModel.

    Raises:
      CheckpointError: `saved_model.pb` or the variables checkpoint is damaged, or a TF1
        SavedModel (one line, naming the file).
    """
    meta_graph, path = _meta_graph(folder)
    nodes = meta_graph.object_graph_def.nodes
    root_children = {child.local_name: child.node_id for child in nodes[0].children}
    assets = {}
    for child in nodes:
        for reference in child.children:
            node = nodes[reference.node_id]
            if node.WhichOneof("kind") == "asset":
                index = node.asset.asset_file_def_index
                if index >= len(meta_graph.asset_file_def):
                    raise CheckpointError(f"{path}: asset `{reference.local_name}` refers to "
                                          f"no asset file (index {index}).")
                name = meta_graph.asset_file_def[index].filename
                if os.path.normpath(name) != name or name.startswith((os.sep, os.pardir)):
                    raise CheckpointError(f"{path}: asset `{reference.local_name}` names a file "
                                          f"outside its assets/ folder ({name!r}).")
                assets[reference.local_name] = os.path.join(folder, "assets", name)
    prefix = os.path.join(folder, VARIABLES_PREFIX)
    reader, keys, variables, duplicated, root_variables = None, {}, {}, frozenset(), {}
    if os.path.isfile(prefix + ".index"):  # a SavedModel without variables has none
        reader, graph = _checkpoint_graph(prefix)
        keys, variables, duplicated = _checkpoint_variables(reader, graph, prefix)
        for child in graph.nodes[0].children if graph.nodes else ():
            for attribute in graph.nodes[child.node_id].attributes:
                if attribute.name == _VARIABLE_ATTRIBUTE:
                    root_variables[child.local_name] = attribute.checkpoint_key
    ops = collections.Counter(node.op for function in meta_graph.graph_def.library.function
                              for node in function.node_def)
    return SavedModelContents(
        folder=folder,
        signatures=sorted(name for name in meta_graph.signature_def
                          if not name.startswith("__")),
        root_children=sorted(root_children), assets=assets, variables=variables,
        root_variables=root_variables, ops=frozenset(ops), keys=keys,
        duplicated=duplicated, reader=reader)
