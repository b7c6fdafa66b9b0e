"""Model directories and checkpoint converters (google-research TF1, Hugging Face)."""

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.google_research import convert_google_research_checkpoint
from bert_tf.checkpoints.huggingface import (
    convert_huggingface_checkpoint,
    export_huggingface_checkpoint,
    load_huggingface_encoder,
)
from bert_tf.checkpoints.model_dir import (
    CheckpointError,
    OutputExistsError,
    read_config,
    read_model_info,
    restore_model_dir,
    write_model_dir,
    write_model_info,
)

__all__ = [
    "CheckpointError",
    "OutputExistsError",
    "convert_checkpoint",
    "convert_google_research_checkpoint",
    "convert_huggingface_checkpoint",
    "export_huggingface_checkpoint",
    "load_huggingface_encoder",
    "read_config",
    "read_model_info",
    "restore_model_dir",
    "write_model_dir",
    "write_model_info",
]
