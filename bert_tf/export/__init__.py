"""SavedModel export with in-graph preprocessing (TF Serving, TF Hub-style reuse), and ONNX."""

from bert_tf.export.exporter import export_saved_model
from bert_tf.export.onnx_export import export_onnx
from bert_tf.export.op_audit import OpAuditError, audit_saved_model
from bert_tf.export.options import EXPORT_HEADS, ExportOptions
from bert_tf.export.serving_module import ExportError

__all__ = ["EXPORT_HEADS", "ExportError", "ExportOptions", "OpAuditError", "audit_saved_model",
           "export_onnx", "export_saved_model"]
