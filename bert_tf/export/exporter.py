"""Exports a model directory as a versioned SavedModel that TF Serving loads.

Layout: `export_dir/<version>/` (TF Serving serves the highest version), with
`batching_parameters.txt` (TF Serving's `--batching_parameters_file`) and
`export_metadata.json` (head, dtype and why, seq_length, ...) beside saved_model.pb.
The SavedModel is written to a temporary folder beside it, audited, then renamed into place,
so a failed export leaves nothing behind and an existing version is never touched.

Example:
>>> export_saved_model("/tmp/minilm", "/tmp/export", head="encoder")  # doctest: +SKIP
'/tmp/export/1'
"""

import json
import os
import shutil
import uuid

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.building import load_pretrained
from bert_tf.export import op_audit
from bert_tf.export.batching import write_batching_parameters
from bert_tf.export.choice_serving import MultipleChoiceServing
from bert_tf.export.hub_modules import HubEncoderModule, PreprocessorModule
from bert_tf.export.options import EXPORT_HEADS, HUB_INTERFACES
from bert_tf.export.precision import resolve_dtype
from bert_tf.export.restored_model import restore_model
from bert_tf.export.serving_module import (
    ClassifierServing,
    EncoderServing,
    ExportError,
    PretrainerServing,
)
from bert_tf.export.span_serving import SpanServing
from bert_tf.export.token_serving import TokenClassifierServing
from bert_tf.file_io import OutputExistsError

_SERVING_MODULES = {
    "encoder": EncoderServing,
    "pretrainer": PretrainerServing,
    "classifier": ClassifierServing,
    "token_classifier": TokenClassifierServing,
    "span_labeler": SpanServing,
    "multiple_choice": MultipleChoiceServing,
}
# Heads whose `serving_default` may take `text` or `text_a` + `text_b`; the others are fixed.
_OPTIONAL_PAIR_HEADS = ("encoder", "classifier")
DEFAULT_SEQ_LENGTH = {"span_labeler": 384}
# How the export was made (head, dtype and why, seq_length, ...), beside saved_model.pb.
METADATA_FILE = "export_metadata.json"


def existing_versions(export_dir):
    """The integer version folders in `export_dir`, sorted."""
    if not tf.io.gfile.isdir(export_dir):
        return []
    return sorted(int(name) for name in tf.io.gfile.listdir(export_dir)
                  if name.rstrip("/").isdigit())


def export_seq_length(model_dir, head, seq_length=None):
    """The packed length to export: `seq_length`, else model_info.json's, else 128 (span: 384).

    Raises:
      ExportError: longer than the model's `max_position_embeddings` or shorter than 3.
    """
    saved = model_dir_lib.read_model_info(model_dir).get("max_seq_length")
    seq_length = seq_length or saved or DEFAULT_SEQ_LENGTH.get(head, 128)
    max_length = model_dir_lib.read_config(model_dir).max_position_embeddings
    if not 2 < seq_length <= max_length:
        raise ExportError(f"seq_length must be in 3..{max_length} (the model's "
                          f"max_position_embeddings); received {seq_length}.")
    return seq_length


def build_export_module(model_dir, head, seq_length=None, text_pair=False, padding="longest",
                        dtype="float32"):
    """The tf.Module to save for `head` (one of `EXPORT_HEADS`) from `model_dir`.

    `padding` and `dtype` ("float32" or "bfloat16") apply to the model heads; the TF Hub
    interfaces keep TF Hub's fixed `seq_length` contract and float32."""
    if head not in EXPORT_HEADS:
        raise ExportError(f"Unknown head {head!r}; choose one of {', '.join(EXPORT_HEADS)}.")
    if head in HUB_INTERFACES and dtype != "float32":
        raise ExportError(f"--head={head} (a TF Hub interface) is exported in float32 only; "
                          f"received dtype {dtype}.")
    if head == "preprocessor":
        vocab_file, lower_case = model_dir_lib.resolve_lower_case(model_dir)
        return PreprocessorModule(vocab_file, lower_case=lower_case,
                                  seq_length=export_seq_length(model_dir, head, seq_length))
    if head == "hub_encoder":
        pretrained = load_pretrained(model_dir)  # the masked-LM head too, where it has one
        vocab_file, lower_case = model_dir_lib.resolve_lower_case(model_dir)
        return HubEncoderModule(pretrained.encoder, pretrained.heads.get("masked_lm"),
                                vocab_file, lower_case)
    restored = restore_model(model_dir, head, dtype=dtype)
    seq_length = export_seq_length(model_dir, head, seq_length)
    if head in _OPTIONAL_PAIR_HEADS:
        return _SERVING_MODULES[head](restored, seq_length, text_pair=text_pair, padding=padding)
    if text_pair:
        logging.info("--head=%s always takes its fixed inputs; text_pair is ignored.", head)
    return _SERVING_MODULES[head](restored, seq_length, padding=padding)


def _write_metadata(folder, metadata):
    with open(os.path.join(folder, METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")


def read_export_metadata(export_path):
    """The `export_metadata.json` of an export (head, dtype and its reason, seq_length...)."""
    with open(os.path.join(export_path, METADATA_FILE), encoding="utf-8") as f:
        return json.load(f)


def save_module(module, export_path):
    """Saves an export module with its signatures (`module.signatures()`)."""
    tf.saved_model.save(module, export_path, signatures=module.signatures())


def export_saved_model(model_dir, export_dir, head, seq_length=None, version=None,
                       tf_serving_version=op_audit.DEFAULT_TF_SERVING_VERSION, text_pair=False,
                       padding="longest", dtype="float32"):
    """Exports `model_dir` with `head` to `export_dir/<version>/` and audits its ops.

    Args:
      model_dir: a model directory (`write_model_dir`).
      export_dir: the TF Serving model base path.
      head: one of `EXPORT_HEADS`: a head of the model directory (`model_dir.HEADS`),
        "preprocessor" (TF Hub `bert_*_preprocess` interface) or "hub_encoder" (TF Hub
        encoder interface).
      seq_length: packed length of `serving_default`; default `max_seq_length` of
        model_info.json, else 128 (384 for span_labeler).
      version: the version folder; default one more than the highest existing (1 if none).
      tf_serving_version: the TF Serving release whose ops the export must stay within.
      text_pair: encoder / classifier only: take `text_a` + `text_b` instead of `text`.
      padding: "longest" (each request packed to its own longest sequence) or "fixed"
        (`seq_length`); see `serving_module`.
      dtype: "float32", "bfloat16" (weights and matmuls; LayerNorm, softmax and the outputs
        stay float32) or "auto" (bfloat16 where this machine's CPU has native bfloat16,
        `precision.resolve_dtype`). The choice and its reason go to `export_metadata.json`.

    Returns:
      The path of the written SavedModel.

    Raises:
      OutputExistsError: `export_dir/<version>` exists (nothing is overwritten).
      ExportError, CheckpointError: the model directory lacks the head, or bad arguments
        (`export_dir` a file).
      op_audit.OpAuditError: the graph uses ops that TF Serving `tf_serving_version` lacks.
    """
    op_audit.tf_serving_op_sets(tf_serving_version)  # Fail on an unknown release before work.
    if tf.io.gfile.exists(export_dir) and not tf.io.gfile.isdir(export_dir):
        raise ExportError(f"export_dir {export_dir} is a file, not a folder; give the folder "
                          "that TF Serving reads versions from (it is created if missing).")
    if version is None:
        version = (existing_versions(export_dir) or [0])[-1] + 1
    if int(version) < 1:
        raise ExportError(f"version must be a positive integer; received {version}.")
    export_path = os.path.join(export_dir, str(int(version)))
    if tf.io.gfile.exists(export_path):
        raise OutputExistsError(
            f"Export version {export_path} already exists; nothing was overwritten. Pass a new "
            f"--version (existing: {existing_versions(export_dir)}) or omit it to use the next.")
    if head in HUB_INTERFACES and dtype == "auto":
        dtype = "float32"
    dtype, dtype_reason = resolve_dtype(dtype)
    module = build_export_module(model_dir, head, seq_length, text_pair, padding, dtype)
    staging = os.path.join(export_dir, f".tmp-{version}-{uuid.uuid4().hex[:8]}")
    try:
        save_module(module, staging)
        try:
            ops = op_audit.audit_saved_model(staging, tf_serving_version)
        except op_audit.OpAuditError as error:
            raise op_audit.OpAuditError(
                f"Export of {model_dir} to {export_path} stopped, nothing was written: "
                f"{error}") from None
        # TF Serving's --batching_parameters_file, beside saved_model.pb (the server ignores
        # files it does not know in a version folder).
        write_batching_parameters(staging)
        _write_metadata(staging, {
            "head": head, "dtype": dtype, "dtype_reason": dtype_reason,
            "seq_length": getattr(module, "seq_length", None), "padding": padding,
            "text_pair": text_pair, "tf_serving_version": tf_serving_version,
            "tensorflow_version": tf.__version__, "model_dir": os.path.abspath(model_dir)})
        tf.io.gfile.rename(staging, export_path)
    finally:
        if tf.io.gfile.exists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    logging.info("Exported %s (--head=%s, --dtype=%s: %s, %d op types, op audit passed for TF "
                 "Serving %s) to %s.", model_dir, head, dtype, dtype_reason, len(ops),
                 tf_serving_version, export_path)
    return export_path
