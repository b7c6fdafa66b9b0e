"""Checkpoint converters (google-research TF1, Hugging Face); the model directory is `bert_tf.model_dir`."""

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.google_research import convert_google_research_checkpoint
from bert_tf.checkpoints.huggingface import load_huggingface_encoder
from bert_tf.checkpoints.huggingface_tasks import convert_huggingface_checkpoint
from bert_tf.checkpoints.huggingface_export import export_huggingface_checkpoint

__all__ = [
    "convert_checkpoint",
    "convert_google_research_checkpoint",
    "convert_huggingface_checkpoint",
    "export_huggingface_checkpoint",
    "load_huggingface_encoder",
]
