"""ExportOptions: every setting of an export, declared once (flags of tools/export_saved_model.py).

Example:
>>> options = ExportOptions(model_dir="/tmp/minilm", export_dir="/tmp/serving/minilm",
...                         head="encoder")
>>> export_saved_model(**dataclasses.asdict(options))  # doctest: +SKIP
'/tmp/serving/minilm/1'
"""

import dataclasses

from bert_tf.checkpoints.model_dir import HEADS
from bert_tf.export.op_audit import DEFAULT_TF_SERVING_VERSION
from bert_tf.export.serving_module import SERVING_PADDINGS
from bert_tf.options import option

# TF Hub-interface exports (hub_modules.py) beside the model heads.
HUB_INTERFACES = ("preprocessor", "hub_encoder")
EXPORT_HEADS = HEADS + HUB_INTERFACES


@dataclasses.dataclass
class ExportOptions:
    """What to export from which model directory, and where."""

    model_dir: str = option(
        None, "Model directory (bert_config.json, vocab.txt, checkpoint; model_info.json with "
        "label_names, do_lower_case and max_seq_length).", required=True)
    export_dir: str = option(
        None, "TF Serving model base path; the export goes to <export_dir>/<version>/.",
        required=True)
    head: str = option(
        None, "What serving_default computes: a head of the model directory (encoder: no "
        "head, the pooled and sequence outputs) or a TF Hub interface (preprocessor, "
        "hub_encoder).", choices=EXPORT_HEADS, required=True)
    seq_length: int = option(
        None, "Longest packed sequence of serving_default (default: max_seq_length of "
        "model_info.json, else 128; 384 for span_labeler).", lower_bound=3)
    padding: str = option(
        "longest", "Width of serving_default's batch: longest (each request's longest sequence, "
        "rounded up to a multiple of 8, at most seq_length) or fixed (seq_length).",
        choices=SERVING_PADDINGS)
    version: int = option(None, "Version folder (default: one above the highest).",
                          lower_bound=1)
    tf_serving_version: str = option(
        DEFAULT_TF_SERVING_VERSION,
        "Fail unless TF Serving of this release has every op of the export.")
    text_pair: bool = option(False, "encoder/classifier: serving_default takes text_a and "
                             "text_b instead of text.")
    dtype: str = option(
        "float32", "Weights and matmuls: float32, bfloat16 (half the size; faster where the "
        "CPU has native bfloat16: avx512_bf16 / AMX), or auto (bfloat16 if the exporting "
        "machine's CPU has it, else float32). Recorded in export_metadata.json.",
        choices=("auto", "float32", "bfloat16"))


TFLITE_QUANTIZATIONS = ("none", "dynamic_int8")


@dataclasses.dataclass
class TfliteExportOptions:
    """Which model directory and head to write as a raw-text `.tflite` model
    (tools/export_tflite.py)."""

    model_dir: str = option(
        None, "Model directory (bert_config.json, vocab.txt, checkpoint; model_info.json with "
        "label_names, do_lower_case and max_seq_length).", required=True)
    output: str = option(None, "The .tflite file to write (never overwritten).", required=True)
    head: str = option(
        None, "What the model computes: encoder (pooled and sequence outputs) or classifier "
        "(logits, probabilities, label).", choices=EXPORT_HEADS, required=True)
    quantization: str = option(
        "none", "none (float32) or dynamic_int8 (int8 weights, activations quantized per "
        "batch: about 4x smaller and faster on CPUs).", choices=TFLITE_QUANTIZATIONS)
    seq_length: int = option(
        None, "Longest packed sequence (default: max_seq_length of model_info.json, else 128).",
        lower_bound=3)
