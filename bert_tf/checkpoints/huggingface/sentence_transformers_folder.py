"""Writes sentence-transformers folders: what `SentenceTransformer(folder)` loads as the model.

A sentence-transformers folder is a Hugging Face `BertModel` folder (`config.json`,
`model.safetensors`, the tokenizer files) plus the modules that pool its token states
(`modules.json`, `1_Pooling/`, `2_Normalize/` when normalized, and
`sentence_bert_config.json` with `max_seq_length`).
`building.write_sentence_transformers_folder` writes one from a `SentenceEncoder` (its
pooling, normalization, vocab, casing and `max_seq_length`) or from a `Pretrained` (any
checkpoint folder bert_tf reads);
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

from absl import logging

from bert_tf.checkpoints.huggingface import writer
from bert_tf.checkpoints.huggingface.sentence_transformers import SentencePooling

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
    """Writes a `PretrainedModels` as a sentence-transformers folder (module docstring); the
    converter's `--to=sentence_transformers`.

    Returns:
      The path of the written `model.safetensors`.

    Raises:
      CheckpointError: a pooling sentence-transformers does not compute (the tanh pooler).
      FileNotFoundError: no vocab (the folder's tokenizer needs it).
    """
    pretrained.require_vocab()
    return writer.write(sentence_pretrained(pretrained), output_dir)

