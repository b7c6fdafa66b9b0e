"""Checkpoint formats: one registry (`registry.FORMATS`), one result (`Pretrained`), one
converter; the bert_tf model directory is the `model_dir` format. The readers sit below
`models/`; `building` (models from a `Pretrained`, writers from Keras models) and `convert`
sit above it."""

from bert_tf.checkpoints.building import (
    PretrainedModels,
    export_huggingface_checkpoint,
    load_pretrained,
    write_sentence_transformers_folder,
)
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.format import FolderDescription, Format
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.registry import (
    FORMATS,
    describe_folder,
    detect_format,
    find_format,
    read_pretrained,
)


def convert_huggingface_checkpoint(hf_dir, model_dir, do_lower_case=None):
    """Writes a Hugging Face folder as a bert_tf model directory (`convert_checkpoint`)."""
    return convert_checkpoint("huggingface", hf_dir, "model_dir", model_dir, do_lower_case)


__all__ = [
    "FORMATS",
    "FolderDescription",
    "Format",
    "Pretrained",
    "PretrainedModels",
    "convert_checkpoint",
    "convert_huggingface_checkpoint",
    "describe_folder",
    "detect_format",
    "export_huggingface_checkpoint",
    "find_format",
    "load_pretrained",
    "read_pretrained",
    "write_sentence_transformers_folder",
]
