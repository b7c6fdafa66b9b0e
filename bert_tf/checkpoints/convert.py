"""One entry point over the converters: from a checkpoint format to a model directory or HF.

Formats:
  huggingface:      a folder with `config.json`, `model.safetensors`, `vocab.txt`.
  google_research:  a TF1 checkpoint prefix (`.../bert_model.ckpt`) with `bert_config.json`
                    and `vocab.txt` (by default beside it, as in google-research's zips).
  ours / model_dir: a bert_tf model directory.

Example:
>>> convert_checkpoint("google_research", "uncased_L-2_H-128_A-2/bert_model.ckpt",
...                    "huggingface", "/tmp/bert_tiny_hf")  # doctest: +SKIP
"""

import os
import tempfile

from bert_tf.checkpoints.google_research import convert_google_research_checkpoint
from bert_tf.checkpoints.huggingface import (
    convert_huggingface_checkpoint, export_huggingface_checkpoint)

SOURCES = ("huggingface", "google_research", "ours")
TARGETS = ("model_dir", "huggingface")


def _google_research_to_model_dir(input_path, output_dir, bert_config_file, vocab_file):
    folder = os.path.dirname(input_path)
    convert_google_research_checkpoint(
        input_path, bert_config_file or os.path.join(folder, "bert_config.json"),
        vocab_file or os.path.join(folder, "vocab.txt"), output_dir)


def convert_checkpoint(source, input_path, target, output_dir, bert_config_file=None,
                       vocab_file=None):
    """Converts `input_path` in format `source` into `output_dir` in format `target`.

    Args:
      source: `huggingface`, `google_research` or `ours` (a model directory).
      input_path: the HF folder, the TF1 checkpoint prefix or the model directory.
      target: `model_dir` or `huggingface`.
      output_dir: destination folder.
      bert_config_file, vocab_file: google_research only; default to the files beside
        the checkpoint.

    Raises:
      ValueError: an unknown or pointless pair of formats, or a checkpoint that does not
        fit its config; FileNotFoundError: missing inputs.
    """
    if source not in SOURCES or target not in TARGETS:
        raise ValueError(f"Cannot convert from {source!r} to {target!r}: sources are "
                         f"{list(SOURCES)}, targets {list(TARGETS)}.")
    if source != "google_research" and (bert_config_file or vocab_file):
        raise ValueError("--bert_config_file and --vocab_file apply to google_research "
                         f"checkpoints only; {source} inputs carry their own.")
    if source == "huggingface" and target == "model_dir":
        convert_huggingface_checkpoint(input_path, output_dir)
    elif source == "google_research" and target == "model_dir":
        _google_research_to_model_dir(input_path, output_dir, bert_config_file, vocab_file)
    elif source == "ours" and target == "huggingface":
        export_huggingface_checkpoint(input_path, output_dir)
    elif source == "google_research" and target == "huggingface":
        with tempfile.TemporaryDirectory() as model_dir:
            _google_research_to_model_dir(input_path, model_dir, bert_config_file, vocab_file)
            export_huggingface_checkpoint(model_dir, output_dir)
    else:
        raise ValueError(f"Converting {source} to {target} is a copy: nothing to do.")
