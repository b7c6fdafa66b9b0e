"""Writes sentence-transformers folders: what `SentenceTransformer(folder)` loads as the model.

A sentence-transformers folder is a Hugging Face `BertModel` folder (`config.json`,
`model.safetensors`, the tokenizer files) plus the modules that pool its token states
(`modules.json`, `1_Pooling/`, `2_Normalize/` when normalized, and
`sentence_bert_config.json` with `max_seq_length`). `write_sentence_transformers_folder`
writes one from a `SentenceEncoder` (its pooling, normalization, vocab, casing and
`max_seq_length`) or from a `Pretrained` (any checkpoint folder bert_tf reads);
`write(pretrained, output_dir)` is `tools/convert_checkpoint.py --to=sentence_transformers`.
A folder that was read from a sentence-transformers folder keeps its own modules; any other
encoder gets masked mean pooling, normalized (`SentenceEncoder`'s defaults), at its recorded
`max_seq_length`, else 128. A task head is not part of an embedding model: it is left out,
with a warning naming it.

Example:
>>> encoder = SentenceEncoder.from_pretrained("all-MiniLM-L6-v2/")       # doctest: +SKIP
>>> encoder.fit(...)                                                     # doctest: +SKIP
>>> write_sentence_transformers_folder(encoder, "/tmp/minilm_tuned")     # doctest: +SKIP
>>> # in PyTorch: SentenceTransformer("/tmp/minilm_tuned").encode([...]) == encoder.predict([...])
"""

import dataclasses
import os

import keras
from absl import logging

from bert_tf.checkpoints.huggingface import writer
from bert_tf.checkpoints.huggingface.sentence_transformers import SentencePooling
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.errors import UserError
from bert_tf.file_io import refuse_existing

NAME = "sentence_transformers"
# What an encoder without a recorded pooling is written with: `SentenceEncoder`'s defaults.
DEFAULT_POOLING, DEFAULT_NORMALIZE = "mean", True


def sentence_pretrained(pretrained, pooling=None, normalize=None, max_seq_length=None,
                        truncate_dim=None):
    """`pretrained` as the encoder of a sentence-transformers folder: its `sentence_pooling`
    set (the arguments, else its own, else mean + normalize at `sequence_length()`, all dims),
    and any pretraining or task head left out (named in a warning)."""
    own = pretrained.sentence_pooling
    if truncate_dim is None and own:
        truncate_dim = own.truncate_dim
    pooling = pooling or (own.pooling if own else DEFAULT_POOLING)
    if normalize is None:
        normalize = own.normalize if own else DEFAULT_NORMALIZE
    max_seq_length = pretrained.sequence_length(max_seq_length or (own and own.max_seq_length))
    if pretrained.head != "encoder":
        logging.warning("A sentence-transformers folder holds the encoder alone: %s's %s head "
                        "is not written.", pretrained.path or "the model", pretrained.head)
    return dataclasses.replace(
        pretrained, head="encoder", weights=pretrained.encoder_weights, label_names=None,
        problem_type=None, architecture="BertModel", max_seq_length=max_seq_length,
        sentence_pooling=SentencePooling(pooling, normalize, max_seq_length, truncate_dim))


def write(pretrained, output_dir):
    """Writes a `Pretrained` as a sentence-transformers folder (module docstring); the
    converter's `--to=sentence_transformers`.

    Returns:
      The path of the written `model.safetensors`.

    Raises:
      CheckpointError: a pooling sentence-transformers does not compute (the tanh pooler).
      FileNotFoundError: no vocab (the folder's tokenizer needs it).
    """
    pretrained.require_vocab()
    return writer.write(sentence_pretrained(pretrained), output_dir)


def _pretrained_of(model):
    """`(Pretrained, its pooling, its normalize)` of what `write_sentence_transformers_folder`
    takes."""
    if isinstance(model, Pretrained):
        return model, None, None
    if isinstance(model, keras.Model):
        pretrained = writer.from_model(model)
        preprocessor = getattr(model, "preprocessor", None)
        if preprocessor is not None:
            pretrained.max_seq_length = preprocessor.seq_length
        return pretrained, getattr(model, "pooling", None), getattr(model, "normalize", None)
    raise TypeError("write_sentence_transformers_folder takes a SentenceEncoder (or another "
                    "bert_tf model holding an encoder and a preprocessor) or a Pretrained "
                    f"(`load_pretrained(folder)`); received {type(model).__name__}.")


def write_sentence_transformers_folder(model, folder, *, pooling=None, normalize=None,
                                       max_seq_length=None, exist_ok=False):
    """Writes `model` as a sentence-transformers folder that `SentenceTransformer(folder)`
    loads with the embeddings bert_tf computes (module docstring).

    Args:
      model: a `SentenceEncoder` (its pooling, normalization, vocab, casing and
        `preprocessor.seq_length` are written), another Keras model holding a `BertEncoder`
        and a `BertPreprocessor`, or a `Pretrained` (`registry.load_pretrained(folder)` of
        any checkpoint folder; a sentence-transformers folder keeps its own modules).
      folder: the destination; must not exist or be empty, unless `exist_ok`.
      pooling: "mean", "cls_token" or "max" (sentence-transformers' "mean", "cls", "max");
        None: the model's, else "mean".
      normalize: whether a `Normalize` module follows the pooling; None: the model's, else
        True.
      max_seq_length: the tokens sentence-transformers truncates to; None: the model's
        (a `SentenceEncoder`'s preprocessor, the folder's record), else 128.
        A `SentenceEncoder`'s `truncate_dim` goes into `config_sentence_transformers.json`.
      exist_ok: write into a folder that holds other files (a training run's `output_dir`,
        beside its checkpoints); files of the same names are replaced.

    Returns:
      `folder`.

    Raises:
      CheckpointError: pooling "cls" (BERT's tanh pooler, which sentence-transformers does
        not compute), or a checkpoint bert_tf cannot read.
      UserError: a model without a vocab or casing (a bare `BertEncoder`: pass a
        `SentenceEncoder`).
      OutputExistsError: `folder` exists and is not empty, without `exist_ok` (nothing is
        written).
    """
    folder = os.fspath(folder)
    if not exist_ok:
        refuse_existing(folder, "output directory")
    pretrained, own_pooling, own_normalize = _pretrained_of(model)
    if pretrained.vocab is None or pretrained.lower_case is None:
        raise UserError("A sentence-transformers folder needs the model's vocab and casing: "
                        "pass a SentenceEncoder (with its preprocessor) or a checkpoint folder.")
    pretrained = sentence_pretrained(
        pretrained, pooling or own_pooling,
        own_normalize if normalize is None else normalize, max_seq_length,
        getattr(model, "truncate_dim", None))
    writer.write(pretrained, folder)
    return folder
