"""Exports a model directory as a versioned SavedModel that TF Serving loads.

Layout: `export_dir/<version>/` (TF Serving serves the highest version). The SavedModel is
written to a temporary folder beside it, audited, then renamed into place, so a failed export
leaves nothing behind and an existing version is never touched.

Example:
>>> export_saved_model("/tmp/minilm", "/tmp/export", task="encoder")  # doctest: +SKIP
'/tmp/export/1'
"""

import os
import shutil
import uuid

import tensorflow as tf
from absl import logging

from bert_tf.export import op_audit
from bert_tf.export.choice_serving import MultipleChoiceServing
from bert_tf.export.hub_modules import HubEncoderModule, PreprocessorModule
from bert_tf.export.serving_module import ClassifierServing, EncoderServing, PretrainerServing
from bert_tf.export.span_serving import SpanServing
from bert_tf.export.task_models import TASKS, load_task_model, tokenizer_settings
from bert_tf.export.token_serving import TokenClassifierServing

_SERVING_MODULES = {
    "encoder": EncoderServing,
    "pretrainer": PretrainerServing,
    "classifier": ClassifierServing,
    "token_classifier": TokenClassifierServing,
    "span": SpanServing,
    "multiple_choice": MultipleChoiceServing,
}
# Tasks whose `serving_default` may take `text` or `text_a` + `text_b`; the others are fixed.
_OPTIONAL_PAIR_TASKS = ("encoder", "classifier")
DEFAULT_SEQ_LENGTH = {"span": 384}
# TF Hub-interface exports (hub_modules.py) beside the task models.
EXPORT_TASKS = TASKS + ("preprocessor", "hub_encoder")


def existing_versions(export_dir):
    """The integer version folders in `export_dir`, sorted."""
    if not tf.io.gfile.isdir(export_dir):
        return []
    return sorted(int(name) for name in tf.io.gfile.listdir(export_dir)
                  if name.rstrip("/").isdigit())


def build_export_module(model_dir, task, seq_length=None, text_pair=False):
    """The tf.Module to save for `task` (one of `EXPORT_TASKS`) from `model_dir`."""
    if task not in EXPORT_TASKS:
        raise ValueError(f"Unknown task {task!r}; choose one of {', '.join(EXPORT_TASKS)}.")
    seq_length = seq_length or DEFAULT_SEQ_LENGTH.get(task, 128)
    if task == "preprocessor":
        vocab_file, lower_case = tokenizer_settings(model_dir)
        return PreprocessorModule(vocab_file, lower_case=lower_case, seq_length=seq_length)
    if task == "hub_encoder":
        return HubEncoderModule(load_task_model(model_dir, "encoder").encoder)
    task_model = load_task_model(model_dir, task)
    if task in _OPTIONAL_PAIR_TASKS:
        return _SERVING_MODULES[task](task_model, seq_length, text_pair=text_pair)
    if text_pair:
        logging.info("--task=%s always takes its fixed inputs; text_pair is ignored.", task)
    return _SERVING_MODULES[task](task_model, seq_length)


def save_module(module, export_path):
    """Saves an export module with its signatures (`module.signatures()`)."""
    tf.saved_model.save(module, export_path, signatures=module.signatures())


def export_saved_model(model_dir, export_dir, task, seq_length=None, version=None,
                       tf_serving_version=op_audit.DEFAULT_TF_SERVING_VERSION, text_pair=False):
    """Exports `model_dir` for `task` to `export_dir/<version>/` and audits its ops.

    Args:
      model_dir: a model directory (`write_model_dir`).
      export_dir: the TF Serving model base path.
      task: one of `EXPORT_TASKS`: a task model (`task_models.TASKS`), "preprocessor" (TF Hub
        `bert_*_preprocess` interface) or "hub_encoder" (TF Hub encoder interface).
      seq_length: packed length of `serving_default`; default 128 (384 for span).
      version: the version folder; default one more than the highest existing (1 if none).
      tf_serving_version: the TF Serving release whose ops the export must stay within.
      text_pair: encoder / classifier only: take `text_a` + `text_b` instead of `text`.

    Returns:
      The path of the written SavedModel.

    Raises:
      FileExistsError: `export_dir/<version>` exists (nothing is overwritten).
      ValueError: the model directory lacks the task's head, or bad arguments.
      op_audit.OpAuditError: the graph uses ops that TF Serving `tf_serving_version` lacks.
    """
    op_audit.tf_serving_op_sets(tf_serving_version)  # Fail on an unknown release before work.
    if version is None:
        version = (existing_versions(export_dir) or [0])[-1] + 1
    if int(version) < 1:
        raise ValueError(f"version must be a positive integer; received {version}.")
    export_path = os.path.join(export_dir, str(int(version)))
    if tf.io.gfile.exists(export_path):
        raise FileExistsError(
            f"Export version {export_path} already exists; nothing was overwritten. Pass a new "
            f"--version (existing: {existing_versions(export_dir)}) or omit it to use the next.")
    module = build_export_module(model_dir, task, seq_length, text_pair)
    staging = os.path.join(export_dir, f".tmp-{version}-{uuid.uuid4().hex[:8]}")
    try:
        save_module(module, staging)
        try:
            ops = op_audit.audit_saved_model(staging, tf_serving_version)
        except op_audit.OpAuditError as error:
            raise op_audit.OpAuditError(
                f"Export of {model_dir} to {export_path} stopped, nothing was written: "
                f"{error}") from None
        tf.io.gfile.rename(staging, export_path)
    finally:
        if tf.io.gfile.exists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    logging.info("Exported %s (--task=%s, %d op types, op audit passed for TF Serving %s) to %s.",
                 model_dir, task, len(ops), tf_serving_version, export_path)
    return export_path
