"""Model Garden TF2 checkpoints: `bert_config.json` + an object-based checkpoint + `vocab.txt`.

The TensorFlow Model Garden (`official/nlp`) publishes its BERTs (the v3 ones) and writes its
conversions and pretraining exports as TF2 object-based checkpoints of its `BertEncoder`
(under `encoder`, or `model` in older ones) or `BertPretrainerV2` (`encoder`, `masked_lm`,
`next_sentence.pooler_dense`). A folder is recognised by its checkpoint's object graph holding
such an encoder (`layout`), read by walking that graph (`reader`), never by guessing names.

Example:
>>> print(FORMAT.describe("uncased_L-12_H-768_A-12/"))  # doctest: +SKIP
uncased_L-12_H-768_A-12/: Model Garden TF2 checkpoint, `encoder` layout (bert_model.ckpt.*)
  architecture: BertEncoder (bert_tf head: encoder)
  vocab: uncased_L-12_H-768_A-12/vocab.txt (30522 tokens), casing not recorded
"""

import os

from bert_tf.checkpoints import model_dir as model_dir_lib
from bert_tf.checkpoints.format import FolderDescription, Format
from bert_tf.checkpoints.model_garden import layout as layout_lib
from bert_tf.checkpoints.model_garden.reader import read_config, read_models
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.file_io import read_json_object
from bert_tf.tokenization.vocab import load_vocab

NAME = "model_garden"
TITLE = "Model Garden TF2 checkpoint"
# Model Garden's class of each layout's model.
_ARCHITECTURES = {"encoder": "BertEncoder", "model": "BertEncoder",
                  "pretrainer": "BertPretrainerV2"}


def _checkpoint(path):
    """`(folder, prefix)` of a Model Garden candidate: `bert_config.json` beside a TF
    checkpoint that is not a model directory's `model.ckpt`; else None."""
    path = os.fspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    if not os.path.isfile(os.path.join(folder, model_dir_lib.CONFIG_NAME)):
        return None
    prefix = layout_lib.find_prefix(path)
    if prefix is None or os.path.basename(prefix) == model_dir_lib.CHECKPOINT_PREFIX:
        return None
    return os.path.dirname(prefix), prefix


def recognise(path):
    """`bert_config.json` beside a TF2 checkpoint whose object graph holds a Model Garden
    `BertEncoder` (or `BertPretrainerV2`) under `encoder` or `model`.

    Reads the checkpoint's index and object graph, no weights.

    Raises:
      CheckpointError: an object-based checkpoint beside `bert_config.json` with neither
        `encoder`, `model` nor `masked_lm`: what it holds is named.
    """
    found = _checkpoint(path)
    if found is None:
        return False
    return layout_lib.recognised_layout(found[1]) is not None


def _layout(path):
    folder, prefix = _checkpoint(path)
    return folder, prefix, layout_lib.read_layout(prefix)


def describe(path):
    """The layout, its model class and heads, and the vocab, from the object graph; the
    position table's length from `bert_config.json` (`read` checks the table against it)."""
    folder, prefix, layout = _layout(path)
    vocab = os.path.join(folder, model_dir_lib.VOCAB_NAME)
    positions = read_json_object(
        os.path.join(folder, model_dir_lib.CONFIG_NAME)).get("max_position_embeddings")
    return FolderDescription(
        os.fspath(path), NAME, f"{TITLE}, `{layout.name}` layout",
        weights=[os.path.basename(prefix) + ".*"],
        architecture=_ARCHITECTURES[layout.name] + (
            f" + {layout_lib.NEXT_SENTENCE_POOLER_KEY}" if layout.next_sentence_pooler else ""),
        head="pretrainer" if layout.masked_lm is not None else "encoder",
        pretraining_heads=["masked_lm"] if layout.masked_lm is not None else [],
        vocab=vocab if os.path.isfile(vocab) else None,
        max_position_embeddings=positions if isinstance(positions, int) else None)


def read(path, do_lower_case=None, copy_pooler_dense_to_encoder=False):
    """The encoder and masked-LM head (where held) as a `Pretrained`.

    Args:
      copy_pooler_dense_to_encoder: take the pooler from the next-sentence head's
        `next_sentence.pooler_dense` (the one Model Garden's BERT pretraining trains), as
        Model Garden's TF Hub export does under that name; by default the encoder's own, so
        `pooled_output` equals Model Garden's `BertEncoder`'s.

    Raises:
      FileNotFoundError: no `vocab.txt`.
      CheckpointError: no encoder, an embedding projection, or tensors missing, left over,
        shaped unlike `bert_config.json` or not finite (named).
    """
    folder, prefix, layout = _layout(path)
    config = read_config(folder)
    vocab_file = os.path.join(folder, model_dir_lib.VOCAB_NAME)
    if not os.path.isfile(vocab_file):
        raise FileNotFoundError(f"{folder} has no {model_dir_lib.VOCAB_NAME}: the WordPiece "
                                "vocabulary is needed to tokenize text.")
    vocab = FolderVocab(load_vocab(vocab_file), vocab_file)  # Model Garden records no casing
    encoder, heads = read_models(
        layout, config, prefix, copy_pooler_dense_to_encoder,
        os.path.join(folder, model_dir_lib.CONFIG_NAME))
    return Pretrained(NAME, os.fspath(path), config, encoder,
                      "pretrainer" if heads else "encoder", vocab,
                      vocab.choose_lower_case(do_lower_case), heads=heads,
                      model_info={"model_garden_layout": layout.name})


FORMAT = Format(
    name=NAME, title=TITLE,
    layout="bert_config.json + a TF2 checkpoint of a Model Garden BertEncoder or "
           "BertPretrainerV2 (object `encoder` or `model`) + vocab.txt",
    recognise=recognise, describe=describe, read=read,
    options=("copy_pooler_dense_to_encoder",))
