"""A Keras `.keras` file recognised by its name and described from its zip's `config.json`.

Example:
>>> describe("classifier.keras").architecture   # doctest: +SKIP
'TextClassifier'
"""

import json
import os
import zipfile

from bert_tf.checkpoints.format import FolderDescription
from bert_tf.errors import CheckpointError

NAME = "keras"
TITLE = "Keras .keras file"
VOCAB_ASSET_HINT = "vocab.txt (an asset inside the file)"


def recognise(path):
    """A file named `*.keras`."""
    return os.path.isfile(path) and os.fspath(path).endswith(".keras")


def describe(path):
    """A `FolderDescription` from the zip's `config.json` (the model's class) and file list."""
    try:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json").decode("utf-8"))
            has_vocab = any(name.endswith("/vocab.txt") for name in archive.namelist())
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: not a Keras .keras file ({error}).") from None
    return FolderDescription(
        os.fspath(path), NAME, TITLE, weights=[os.path.basename(path)],
        architecture=config.get("class_name") if isinstance(config, dict) else None,
        vocab=VOCAB_ASSET_HINT if has_vocab else None)
