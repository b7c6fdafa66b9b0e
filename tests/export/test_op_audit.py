"""The op audit: every export passes for TF Serving 2.12; ops the server lacks are named."""

import json
import os

import pytest
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from bert_tf.export import op_audit
from tests.export.conftest import RoundRobinModule

DATA_DIR = os.path.join(os.path.dirname(op_audit.__file__), "tf_serving_ops")


def test_classifier_export_passes_for_2_12(tiny_classifier):
    ops = op_audit.audit_saved_model(tiny_classifier[1], "2.12")
    assert {"FastWordpieceTokenizeWithOffsets", "MatMul"} <= set(ops)
    assert "TFText>RoundRobinTrim" not in ops


def test_minilm_export_passes_for_2_12(minilm_encoder_export):
    ops = op_audit.audit_saved_model(minilm_encoder_export, "2.12")
    # Uncased: accents are stripped after NFD normalisation.
    assert {"NormalizeUTF8", "FastWordpieceTokenizeWithOffsets"} <= set(ops)


def test_round_robin_trimmer_fails_for_2_12_naming_the_op(tmp_path):
    module = RoundRobinModule()
    tf.saved_model.save(module, str(tmp_path), signatures=module.signatures())
    with pytest.raises(op_audit.OpAuditError, match=r"TFText>RoundRobinTrim \(used in"):
        op_audit.audit_saved_model(str(tmp_path), "2.12")
    assert "TFText>RoundRobinTrim" in op_audit.audit_saved_model(str(tmp_path), "2.20")


@pytest.mark.parametrize("op, version, missing", [
    ("FastBertNormalize", "2.11", True),     # tf-text 2.8.2
    ("FastBertNormalize", "2.12", False),    # tf-text 2.12.1
    ("TFText>RoundRobinTrim", "2.19", True),
    ("TFText>RoundRobinTrim", "2.20", False),
    ("FastWordpieceTokenizeWithOffsets", "2.10", False),
    ("RaggedFillEmptyRows", "2.12", True),   # core op newer than TF 2.12
    ("MatMul", "2.12", False),
    ("NotARegisteredOp", "2.20", True),
])
def test_missing_ops_per_release(op, version, missing):
    assert (op_audit.missing_ops([op], version) == [op]) is missing


def test_unknown_release_names_the_known_ones():
    with pytest.raises(ValueError, match=r"No op list for TF Serving 2\.9.*2\.10, 2\.11, 2\.12"):
        op_audit.tf_serving_op_sets("2.9")
    with pytest.raises(ValueError, match="must look like"):
        op_audit.tf_serving_op_sets("latest")


def test_op_data_is_consistent_with_the_runtime():
    with open(os.path.join(DATA_DIR, "tf_serving_versions.json"), encoding="utf-8") as f:
        index = json.load(f)
    runtime = set(op_audit._read_json("tf_text_2.21.1.json")["ops"])
    # Every op of our tf-text list is registered by the installed tensorflow_text.
    assert all(op_def_registry.get(op) is not None for op in runtime)
    for tf_text_version in set(index["tf_text"].values()):
        data = op_audit._read_json(f"tf_text_{tf_text_version}.json")
        assert data["source"] and set(data["ops"]) <= runtime
        assert set(data["ops"]) | set(data["absent_of_tf_text_2.21.1"]) == runtime
