"""A Hugging Face BERT folder recognised and described from its small files and weight headers.

`config.json` beside weights bert_tf reads (`model.safetensors`, `tf_model.h5`, or either's
shards with their index); a folder whose only weights are a `pytorch_model.bin` (a pickle) is
refused unread. `describe` reads `config.json`, the weights' headers and the tokenizer files.

Example:
>>> recognise("bert-sst2/")                        # doctest: +SKIP
True
>>> describe("bert-sst2/").label_names             # doctest: +SKIP
['negative', 'positive']
"""

import os

from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.huggingface import architectures, h5_file, safetensors_file
from bert_tf.checkpoints.huggingface.architectures import CONFIG_FILE
from bert_tf.checkpoints.tokenizer_json import TOKENIZER_FILE, read_folder_vocab
from bert_tf.configs import BertConfig
from bert_tf.file_io import read_json_object

NAME = "huggingface"
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
        folder, NAME, f"{TITLE}, {LAYOUTS[os.path.basename(files[0])]}",
        weights=[os.path.basename(path) for path in files],
        architecture=head["architecture"], head=head["head"], num_labels=head["num_labels"],
        label_names=head["label_names"], problem_type=head["problem_type"],
        pretraining_heads=head["pretraining_heads"],
        vocab=vocab.vocab_file or os.path.join(folder, TOKENIZER_FILE),
        vocab_size=len(vocab.tokens), lower_case=vocab.lower_case,
        max_position_embeddings=values.get("max_position_embeddings"),
        config=BertConfig.from_dict(values, source=config_path))
