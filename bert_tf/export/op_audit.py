"""Checks that a SavedModel uses only ops that stock TensorFlow Serving links.

TF Serving's `tensorflow_model_server` has the core TF ops of its TF release plus the kernels
of one pinned tensorflow-text release, often older than the pip one; an op it lacks fails only
at load or request time ("Op type not registered"). This audit fails at export instead. The
op lists and how they were derived are in `tf_serving_ops/` (README.md there).

Example:
>>> audit_saved_model("/tmp/export/1", tf_serving_version="2.12")  # doctest: +SKIP
['BatchMatMulV2', 'FastWordpieceTokenizeWithOffsets', ...]
"""

import functools
import json
import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import op_def_registry

from bert_tf.errors import UserError

DEFAULT_TF_SERVING_VERSION = "2.12"
_DATA_DIR = os.path.join(os.path.dirname(__file__), "tf_serving_ops")
# tensorflow-text of our runtime: its op list names every op the tf-text lists can contain.
_RUNTIME_TF_TEXT = "2.21.1"


class OpAuditError(UserError, ValueError):
    """A SavedModel uses ops that the target TF Serving release does not have."""


@functools.cache
def _read_json(name):
    with open(os.path.join(_DATA_DIR, name), encoding="utf-8") as f:
        return json.load(f)


def supported_tf_serving_versions():
    """The TF Serving releases (`"2.10"` ... `"2.20"`) there is op data for."""
    return sorted(_read_json("tf_serving_versions.json")["tf_text"],
                  key=lambda v: tuple(int(p) for p in v.split(".")))


def _major_minor(version):
    parts = str(version).split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        raise OpAuditError(f"tf_serving_version must look like '2.12' (or '2.12.1'); "
                         f"received {version!r}.")
    return ".".join(parts[:2])


def tf_serving_op_sets(tf_serving_version):
    """Returns `(tf_text_version, tf_text_ops, missing_core_ops)` of a TF Serving release.

    Raises:
      OpAuditError: no op data for that release.
    """
    version = _major_minor(tf_serving_version)
    index = _read_json("tf_serving_versions.json")
    if version not in index["tf_text"]:
        raise OpAuditError(
            f"No op list for TF Serving {tf_serving_version}: known releases are "
            f"{', '.join(supported_tf_serving_versions())} (bert_tf/export/tf_serving_ops/).")
    tf_text_version = index["tf_text"][version]
    tf_text_ops = frozenset(_read_json(f"tf_text_{tf_text_version}.json")["ops"])
    core_file = index["core_ops_missing_file"].get(version)
    missing_core = frozenset(_read_json(core_file)["ops"]) if core_file else frozenset()
    return tf_text_version, tf_text_ops, missing_core


def saved_model_ops(export_path):
    """Maps every op type in a SavedModel to the graphs/functions that use it.

    Walks the top-level graph and every function in its library; calls of library functions
    (nodes whose type is a function name) are not ops.
    """
    path = os.path.join(export_path, "saved_model.pb")
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"No SavedModel at {export_path}: {path} does not exist.")
    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as f:
        saved_model.ParseFromString(f.read())
    users = {}
    for meta_graph in saved_model.meta_graphs:
        library = meta_graph.graph_def.library
        functions = {function.signature.name for function in library.function}
        graphs = [("<graph>", meta_graph.graph_def.node)]
        graphs += [(function.signature.name, function.node_def) for function in library.function]
        for graph_name, nodes in graphs:
            for node in nodes:
                if node.op not in functions:
                    users.setdefault(node.op, set()).add(graph_name)
    return users


def missing_ops(ops, tf_serving_version=DEFAULT_TF_SERVING_VERSION):
    """The op types among `ops` that TF Serving `tf_serving_version` lacks, sorted."""
    _, tf_text_ops, missing_core = tf_serving_op_sets(tf_serving_version)
    all_tf_text_ops = frozenset(_read_json(f"tf_text_{_RUNTIME_TF_TEXT}.json")["ops"])
    missing = []
    for op in ops:
        if op in all_tf_text_ops:
            present = op in tf_text_ops
        else:
            # Core TF: registered in this TF and not known to be newer than the server.
            present = op not in missing_core and op_def_registry.get(op) is not None
        if not present:
            missing.append(op)
    return sorted(missing)


def audit_saved_model(export_path, tf_serving_version=DEFAULT_TF_SERVING_VERSION):
    """Fails unless TF Serving `tf_serving_version` has every op of the SavedModel.

    Args:
      export_path: a SavedModel directory (e.g. `export_dir/1`).
      tf_serving_version: the target model server release, e.g. "2.12".

    Returns:
      The sorted op types the SavedModel uses.

    Raises:
      OpAuditError: naming each missing op and a function that uses it.
    """
    users = saved_model_ops(export_path)
    missing = missing_ops(users, tf_serving_version)
    if missing:
        tf_text_version = tf_serving_op_sets(tf_serving_version)[0]
        details = "; ".join(f"{op} (used in {sorted(users[op])[0]})" for op in missing)
        raise OpAuditError(
            f"SavedModel {export_path} uses op(s) that TF Serving {tf_serving_version} "
            f"(core TF {_major_minor(tf_serving_version)} + tensorflow-text {tf_text_version}) "
            f"does not have: {details}. The model server would fail with 'Op type not "
            f"registered'. Avoid these ops (e.g. tensorflow_text.RoundRobinTrimmer needs TF "
            f"Serving >= 2.20) or target a newer --tf_serving_version.")
    return sorted(users)
