"""SavedModel export with in-graph preprocessing, for TF Serving and TF Hub-style reuse."""

from bert_tf.export.exporter import EXPORT_TASKS, export_saved_model
from bert_tf.export.op_audit import OpAuditError, audit_saved_model

__all__ = ["EXPORT_TASKS", "OpAuditError", "audit_saved_model", "export_saved_model"]
