"""The object graph of a TF2 object-based checkpoint: which object holds which variable.

`tf.train.Checkpoint(encoder=model).save(...)` stores, beside the tensors, a
`TrackableObjectGraph` proto under the key `_CHECKPOINTABLE_OBJECT_GRAPH`: one node per
saved object, each with its named children (`encoder` -> `_transformer_layers` -> `0` ...)
and, for a variable, the checkpoint key its value is stored under. Reading a checkpoint by
walking this graph finds each tensor by the object that owns it, whatever the key's
spelling; a TF1 (name-based) checkpoint has no such graph.

Example:
>>> graph = read_object_graph("bert/bert_model.ckpt")  # doctest: +SKIP
>>> sorted(graph.children(graph.ROOT))                 # doctest: +SKIP
['encoder', 'save_counter']
"""

import tensorflow as tf
from google.protobuf.message import DecodeError
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.errors import CheckpointError, checkpoint_read_error

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
# The attribute a variable's value is saved under.
VARIABLE_VALUE = "VARIABLE_VALUE"
# How a Keras functional model also names the layers its attributes hold.
_KERAS_ALIASES = ("layer-", "layer_with_weights-")


class ObjectGraph:
    """The saved objects of one checkpoint, walked by their local names.

    Args:
      proto: the parsed `TrackableObjectGraph`.
      reader: the checkpoint's `tf.train.CheckpointReader`.
      where: the checkpoint prefix, for messages.
    """

    ROOT = 0

    def __init__(self, proto, reader, where):
        self.proto = proto
        self.reader = reader
        self.where = where

    def children(self, node):
        """{local name: node id} of `node`'s children."""
        return {child.local_name: child.node_id for child in self.proto.nodes[node].children}

    def find(self, node, path):
        """The node at `path` (names joined by `/`) below `node`, or None."""
        for name in path.split("/") if path else ():
            node = self.children(node).get(name)
            if node is None:
                return None
        return node

    def variable_key(self, node):
        """The checkpoint key of variable `node`'s value, or None when `node` is no variable."""
        for attribute in self.proto.nodes[node].attributes:
            if attribute.name == VARIABLE_VALUE:
                return attribute.checkpoint_key
        return None

    def variables(self, node, prefix=""):
        """{path below `node`: variable node} of every variable reachable from `node`.

        A variable held by two objects (a tied embedding; a Keras functional model's
        `layer-N` aliases of its attributes) appears once, under its first path in a
        depth-first walk that visits children in name order, the aliases last.
        """
        found, seen = {}, set()

        def visit(current, path):
            seen.add(current)
            if self.variable_key(current) is not None:
                found[path] = current
                return
            children = sorted(self.children(current).items(),
                              key=lambda item: (item[0].startswith(_KERAS_ALIASES), item[0]))
            for name, child in children:
                if child not in seen:
                    visit(child, f"{path}/{name}" if path else name)

        visit(node, prefix)
        return found

    def shape(self, node):
        return tuple(self.reader.get_variable_to_shape_map()[self.variable_key(node)])

    def read(self, node):
        """Variable `node`'s value as a numpy array."""
        try:
            return self.reader.get_tensor(self.variable_key(node))
        except (IndexError, tf.errors.OpError) as error:
            raise checkpoint_read_error(self.where, error) from None


def read_object_graph(prefix):
    """The `ObjectGraph` of the checkpoint at `prefix`, or None for a name-based (TF1) one.

    Raises:
      CheckpointError: the checkpoint or its object graph cannot be read.
    """
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (IndexError, tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        return None
    try:
        graph = reader.get_tensor(OBJECT_GRAPH_KEY)
    except (IndexError, tf.errors.OpError) as error:  # a data file cut short
        raise checkpoint_read_error(prefix, error) from None
    try:
        proto = trackable_object_graph_pb2.TrackableObjectGraph.FromString(graph)
    except DecodeError as error:
        raise CheckpointError(f"{prefix}: the checkpoint's object graph is damaged "
                              f"({error}).") from None
    if not proto.nodes:
        raise CheckpointError(f"{prefix}: the checkpoint's object graph is empty.")
    return ObjectGraph(proto, reader, prefix)
