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

from bert_tf.checkpoints.describe import detect_format
from bert_tf.checkpoints.google_research import convert_google_research_checkpoint
from bert_tf.checkpoints.huggingface_tasks import convert_huggingface_checkpoint
from bert_tf.checkpoints.huggingface_export import export_huggingface_checkpoint
from bert_tf.file_io import refuse_existing
from bert_tf.model_dir import CheckpointError

SOURCES = ("huggingface", "google_research", "ours")
TARGETS = ("model_dir", "huggingface")


def _google_research_to_model_dir(input_path, output_dir, bert_config_file, vocab_file,
                                  do_lower_case):
    folder = os.path.dirname(input_path)
    convert_google_research_checkpoint(
        input_path, bert_config_file or os.path.join(folder, "bert_config.json"),
        vocab_file or os.path.join(folder, "vocab.txt"), output_dir, do_lower_case)


def detect_source(input_path):
    """`(source, input path)` of `input_path` as `describe.detect_format` sees it (a
    google-research folder becomes its checkpoint prefix)."""
    fmt, _, prefix = detect_format(input_path)
    if fmt == "keras":
        raise CheckpointError(f"{input_path}: a Keras .keras file is not converted; load it "
                              "with keras.saving.load_model.")
    if fmt == "google_research":
        return fmt, prefix
    return ("ours" if fmt == "model_dir" else "huggingface"), input_path


def convert_checkpoint(source, input_path, target, output_dir, bert_config_file=None,
                       vocab_file=None, do_lower_case=None):
    """Converts `input_path` in format `source` into `output_dir` in format `target`.

    Args:
      source: `huggingface`, `google_research` or `ours` (a model directory); None: what
        `describe.detect_format` finds.
      input_path: the HF folder, the TF1 checkpoint prefix or the model directory.
      target: `model_dir` or `huggingface`.
      output_dir: destination folder.
      bert_config_file, vocab_file: google_research only; default to the files beside
        the checkpoint.
      do_lower_case: the model's casing, recorded in `model_info.json` (None: the source's
        record, else a guess from the vocab); model_dir targets only.

    Raises:
      CheckpointError: an unknown or pointless pair of formats, or a checkpoint that is
        damaged, holds NaN/Inf or does not fit its config; FileNotFoundError: missing inputs;
      OutputExistsError: `output_dir` exists and is not empty (nothing is written).
    """
    if source is None:
        source, input_path = detect_source(input_path)
    if source not in SOURCES or target not in TARGETS:
        raise CheckpointError(f"Cannot convert from {source!r} to {target!r}: sources are "
                              f"{list(SOURCES)}, targets {list(TARGETS)}.")
    if (source, target) in (("ours", "model_dir"), ("huggingface", "huggingface")):
        raise CheckpointError(f"Converting {source} to {target} is a copy: nothing to do.")
    if source != "google_research" and (bert_config_file or vocab_file):
        raise CheckpointError("--bert_config_file and --vocab_file apply to google_research "
                              f"checkpoints only; {source} inputs carry their own.")
    if target != "model_dir" and do_lower_case is not None:
        raise CheckpointError("--do_lower_case is recorded in a model directory's "
                              "model_info.json; it does not apply to --to=huggingface.")
    refuse_existing(output_dir, "output directory")
    if source == "huggingface":
        convert_huggingface_checkpoint(input_path, output_dir, do_lower_case)
    elif target == "model_dir":
        _google_research_to_model_dir(input_path, output_dir, bert_config_file, vocab_file,
                                      do_lower_case)
    elif source == "ours":
        export_huggingface_checkpoint(input_path, output_dir)
    else:
        with tempfile.TemporaryDirectory() as model_dir:
            _google_research_to_model_dir(input_path, model_dir, bert_config_file, vocab_file,
                                          None)
            export_huggingface_checkpoint(model_dir, output_dir)
