"""Reads any checkpoint folder bert_tf knows into an encoder plus what its tokenizer needs.

Three layouts, told apart by their file names (`checkpoints.describe.detect_format`):
  model directory:  `bert_config.json` + `model.ckpt.*` (+ `vocab.txt`, `model_info.json`);
  Hugging Face:     `config.json` + `model.safetensors` (or a sharded index) or the TF
                    `tf_model.h5` + `vocab.txt` or `tokenizer.json` (any `BertFor*`:
                    `checkpoints.huggingface_tasks`, which also gives the task head);
  google-research:  `bert_config.json` + `bert_model.ckpt.*` + `vocab.txt` (a folder, or the
                    checkpoint prefix itself).
Hugging Face and google-research weights are converted in memory, through the same name-map
tables as `tools/convert_checkpoint.py`; nothing is written.

Example:
>>> pretrained = load_pretrained("all-MiniLM-L6-v2/")  # doctest: +SKIP
>>> pretrained.lower_case, pretrained.max_seq_length   # doctest: +SKIP
(True, 128)
"""

import dataclasses
import os

import tensorflow as tf

from bert_tf import model_dir as model_dir_lib
from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.google_research import load_google_research_models
from bert_tf.checkpoints import describe, huggingface_tasks
from bert_tf.checkpoints.tokenizer_json import FolderVocab, read_folder_vocab
from bert_tf.model_dir import CheckpointError, choose_lower_case
from bert_tf.models import BertEncoder

# The packed length when the folder records none: the entry points' --max_seq_length default.
DEFAULT_MAX_SEQ_LENGTH = 128


@dataclasses.dataclass
class Pretrained:
    """An encoder read from a folder, and how to tokenize for it.

    Attributes:
      encoder: the `BertEncoder`, weights loaded.
      vocab_file: the folder's `vocab.txt` (None for a Hugging Face folder with only
        `tokenizer.json`: see `vocab`).
      lower_case: the casing the folder records (else guessed from the vocab, with a warning).
      max_seq_length: the caller's, else the folder's `model_info.json`, else 128, capped at
        `max_position_embeddings` only when not given.
      info: the model directory's `model_info.json` ({} for other layouts).
      heads: the pretraining heads the checkpoint holds, keyed as
        `BertPretrainer.checkpoint_items()` (`masked_lm`, `next_sentence`); {} unless asked.
      model_dir: the folder when it is a model directory (fine-tuned heads are read from
        it), else None.
      vocab: the Hugging Face folder's `FolderVocab` (tokens held when there is no
        `vocab.txt`), else None.
      huggingface: the Hugging Face folder's `HuggingFaceTask` (its task head, label names,
        problem type), else None.
    """

    encoder: BertEncoder
    vocab_file: str
    lower_case: bool
    max_seq_length: int
    info: dict
    heads: dict = dataclasses.field(default_factory=dict)
    model_dir: str = None
    vocab: FolderVocab = None
    huggingface: huggingface_tasks.HuggingFaceTask = None

    def preprocessor(self, padding="longest"):
        """A `BertPreprocessor` with the folder's vocab, casing and `max_seq_length`."""
        vocab = self.vocab or FolderVocab(None, self.vocab_file)
        return vocab.preprocessor(self.lower_case, seq_length=self.max_seq_length,
                                  padding=padding)


def _require_vocab(folder):
    vocab_file = os.path.join(folder, model_dir_lib.VOCAB_NAME)
    if not os.path.isfile(vocab_file):
        raise FileNotFoundError(f"{folder} has no {model_dir_lib.VOCAB_NAME}: the WordPiece "
                                "vocabulary is needed to tokenize text.")
    return vocab_file


def _model_dir_models(folder, heads):
    """(encoder, heads) of a model directory; with `heads`, those its checkpoint holds too."""
    if not heads:
        return BertEncoder.from_pretrained(folder), {}
    saved = {name.split("/")[0] for name, _ in
             tf.train.list_variables(model_dir_lib.model_checkpoint_path(folder))}
    encoder, head_layers = weight_map.build_models(
        model_dir_lib.read_config(folder), [g for g in weight_map.HEAD_GROUPS if g in saved])
    model_dir_lib.restore_model_dir(folder, encoder=encoder, **head_layers)
    return encoder, head_layers


def _read(folder, do_lower_case, heads):
    """(encoder, heads, vocab_file, lower_case, info, model_dir or None, extra `Pretrained`
    fields) of `folder`'s layout."""
    fmt, folder, prefix = describe.detect_format(folder)
    if fmt == "model_dir":
        vocab_file, lower_case = model_dir_lib.resolve_lower_case(folder, do_lower_case)
        return (*_model_dir_models(folder, heads), vocab_file, lower_case,
                model_dir_lib.read_model_info(folder), folder, {})
    if fmt in describe.HUGGINGFACE_FORMATS:
        vocab = read_folder_vocab(folder)
        lower_case = vocab.choose_lower_case(do_lower_case)
        task = huggingface_tasks.load_huggingface_task(folder)
        return (task.encoder, task.heads, vocab.vocab_file, lower_case, {}, None,
                {"vocab": vocab, "huggingface": task})
    if fmt == "google_research":
        vocab_file = _require_vocab(folder)
        lower_case = choose_lower_case(vocab_file, do_lower_case=do_lower_case)
        _, encoder, head_layers = load_google_research_models(
            prefix, os.path.join(folder, model_dir_lib.CONFIG_NAME))
        return encoder, head_layers, vocab_file, lower_case, {}, None, {}
    raise CheckpointError(f"{folder}: a {describe.FORMAT_NAMES[fmt]} is loaded with "
                          "keras.saving.load_model, not from_pretrained.")


def load_pretrained(folder, max_seq_length=None, do_lower_case=None, heads=False):
    """Reads `folder` (any layout above) into a `Pretrained`.

    Args:
      folder: the checkpoint folder (or a google-research checkpoint prefix).
      max_seq_length: the packed length; None takes the folder's, else 128.
      do_lower_case: the caller's casing, checked against the folder's record; None takes it.
      heads: also read a model directory's pretraining heads (the other layouts convert
        theirs anyway: their checkpoints are read whole).

    Raises:
      FileNotFoundError: no such folder, or no vocab.
      CheckpointError: not a checkpoint folder, damaged or unlike its config, or a casing
        that contradicts the folder's record.
    """
    folder = os.fspath(folder).rstrip(os.sep) or os.sep
    encoder, head_layers, vocab_file, lower_case, info, model_dir, extras = _read(
        folder, do_lower_case, heads)
    if max_seq_length is None:
        max_seq_length = info.get("max_seq_length") or min(
            DEFAULT_MAX_SEQ_LENGTH, encoder.config.max_position_embeddings)
    return Pretrained(encoder, vocab_file, lower_case, max_seq_length, info, head_layers,
                      model_dir, **extras)
