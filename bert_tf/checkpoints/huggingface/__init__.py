"""Hugging Face BERT folders as a registry format: `config.json` + weights + vocab.

Weights: PyTorch `model.safetensors` (`safetensors_file`), or the TensorFlow `tf_model.h5`
of `TFBertFor*` (`h5_file`), either sharded with its index (`model.safetensors.index.json`,
`tf_model.h5.index.json`; `shards`); every `BertFor*` head with its labels
(`architectures`); the vocab from `vocab.txt` or `tokenizer.json` (`tokenizer_json`).
`reader.read` builds a `Pretrained`, `writer.write` writes one back as the architecture of its
head. A `pytorch_model.bin` is a pickle: refused unread, with how to convert it.

Example:
>>> print(FORMAT.describe("bert-sst2/"))   # doctest: +SKIP
bert-sst2/: Hugging Face folder, safetensors (model.safetensors)
  architecture: BertForSequenceClassification (bert_tf head: classifier)
  head: 2 outputs, labels negative, positive (single_label_classification)
  vocab: bert-sst2/vocab.txt (30522 tokens), lower case
"""

import os

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.huggingface import sentence_transformers_folder
from bert_tf.checkpoints.huggingface.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.huggingface.reader import read
from bert_tf.checkpoints.huggingface.sentence_transformers import MODULES_FILE
from bert_tf.checkpoints.huggingface.writer import write

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="config.json + model.safetensors or tf_model.h5 (or their shards) + vocab.txt or "
           "tokenizer.json",
    recognise=recognise, describe=describe, read=read, write=write)


def recognise_sentence_transformers(path):
    """A Hugging Face folder with a sentence-transformers `modules.json`."""
    return recognise(path) and os.path.isfile(os.path.join(path, MODULES_FILE))


# A write-only target (`registry.TARGETS`): a sentence-transformers folder reads as a Hugging
# Face folder, its pooling included (`Pretrained.sentence_pooling`).
SENTENCE_TRANSFORMERS = Format(
    name=sentence_transformers_folder.NAME, title="sentence-transformers folder",
    layout=f"a Hugging Face folder + {MODULES_FILE} + 1_Pooling/ + sentence_bert_config.json",
    recognise=recognise_sentence_transformers, describe=describe, read=read,
    write=sentence_transformers_folder.write)

__all__ = ["FORMAT", "SENTENCE_TRANSFORMERS", "read", "write"]
