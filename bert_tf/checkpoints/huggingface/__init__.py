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

from bert_tf.checkpoints.format import FolderDescription, Format
from bert_tf.checkpoints.huggingface import architectures, h5_file, safetensors_file
from bert_tf.checkpoints.huggingface.architectures import CONFIG_FILE
from bert_tf.checkpoints.huggingface.reader import FORMAT_NAME, read
from bert_tf.checkpoints.huggingface.writer import export_huggingface_checkpoint, write
from bert_tf.checkpoints.tokenizer_json import TOKENIZER_FILE, read_folder_vocab
from bert_tf.file_io import read_json_object

TITLE = "Hugging Face folder"
# The layout each weights file makes, for `describe`.
LAYOUTS = {safetensors_file.WEIGHTS_FILE: "safetensors",
           safetensors_file.INDEX_FILE: "safetensors, sharded",
           h5_file.WEIGHTS_FILE: "TF h5",
           h5_file.INDEX_FILE: "TF h5, sharded"}


def recognise(path):
    """A folder with `config.json` and weights bert_tf reads.

    Raises:
      CheckpointError: a folder whose only weights are a `pytorch_model.bin` (a pickle).
    """
    path = os.fspath(path)
    if not os.path.isdir(path):
        return False
    if os.path.isfile(os.path.join(path, CONFIG_FILE)) and any(
            os.path.isfile(os.path.join(path, name)) for name in architectures.WEIGHTS_FILES):
        return True
    if os.path.isfile(os.path.join(path, architectures.PICKLE_FILE)):
        architectures.weights_file(path)  # raises the pickle-only error
    return False


def describe(path):
    """A `FolderDescription` from `config.json`, the weights' headers and the tokenizer files."""
    folder = os.fspath(path)
    config_path = os.path.join(folder, CONFIG_FILE)
    values = read_json_object(config_path)
    architectures.check_model_type(values, config_path)
    files = architectures.weights_files(folder)
    source, tensor_names = architectures.read_tensors(folder)  # headers / metadata only
    head = architectures.describe_head(values, source, tensor_names, config_path)
    vocab = read_folder_vocab(folder)
    return FolderDescription(
        folder, FORMAT_NAME, f"{TITLE}, {LAYOUTS[os.path.basename(files[0])]}",
        weights=[os.path.basename(path) for path in files],
        architecture=head["architecture"], head=head["head"], num_labels=head["num_labels"],
        label_names=head["label_names"], problem_type=head["problem_type"],
        pretraining_heads=head["pretraining_heads"],
        vocab=vocab.vocab_file or os.path.join(folder, TOKENIZER_FILE),
        vocab_size=len(vocab.tokens), lower_case=vocab.lower_case,
        max_position_embeddings=values.get("max_position_embeddings"))


FORMAT = Format(
    name=FORMAT_NAME, title=TITLE,
    layout="config.json + model.safetensors or tf_model.h5 (or their shards) + vocab.txt or "
           "tokenizer.json",
    recognise=recognise, describe=describe, read=read, write=write)

__all__ = ["FORMAT", "export_huggingface_checkpoint", "read", "write"]
