"""A keras-hub BERT preset recognised and described from its JSON files (no weights read).

A preset is a folder whose `config.json` names a keras-hub class, with `metadata.json` or
`model.weights.h5` beside it (`preset` parses the files); presets of other architectures are
recognised and then refused by name when described or read.

Example:
>>> recognise("bert_tiny_en_uncased/")                      # doctest: +SKIP
True
>>> describe("bert_classifier_preset/").num_labels           # doctest: +SKIP
3
"""

import os

from bert_tf.checkpoints.format import FolderDescription
from bert_tf.checkpoints.keras_hub import preset as preset_lib
from bert_tf.checkpoints.keras_hub import weights_file
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object

NAME = "keras_hub"
TITLE = "keras-hub preset"
HEADS = {None: "encoder", preset_lib.CLASSIFIER: "classifier",
         preset_lib.MASKED_LM: "pretrainer"}


def recognise(folder):
    """Whether `folder` is a keras-hub preset: `config.json` naming a keras-hub class, and
    `metadata.json` or `model.weights.h5` beside it."""
    if not (os.path.isdir(folder) and os.path.isfile(os.path.join(folder, preset_lib.CONFIG_FILE))):
        return False
    if not any(os.path.isfile(os.path.join(folder, name)) for name in
               (preset_lib.METADATA_FILE, "model.weights.h5", preset_lib.SHARDED_WEIGHTS_FILE)):
        return False
    try:
        values = read_json_object(os.path.join(folder, preset_lib.CONFIG_FILE))
    except CheckpointError:
        return False
    registered = values.get("registered_name")
    return isinstance(registered, str) and registered.startswith(preset_lib.PACKAGES)


def _missing_vocab(preset):
    """What the title says of a preset without its vocabulary ("" for one with it)."""
    if preset.vocab_file:
        return ""
    if preset.has(preset_lib.TOKENIZER_FILE):
        return f", {preset_lib.VOCAB_FILE} missing beside {preset_lib.TOKENIZER_FILE}"
    return (f", saved without its tokenizer (no {preset_lib.VOCAB_FILE}: its encoder reads; "
            "to tokenize or convert, give --vocab_file)")


def describe(path):
    """A `FolderDescription` of a preset from its JSON files (no weights read)."""
    preset = preset_lib.read_preset(path)
    files = [name for name in (weights_file.MODEL_WEIGHTS_FILE, weights_file.TASK_WEIGHTS_FILE)
             if preset.has(name)]
    return FolderDescription(
        path=os.fspath(path), format=NAME, weights=files,
        title=TITLE + (f", preprocessor sequence_length {preset.sequence_length}"
                       if preset.sequence_length else "")
        + _missing_vocab(preset),
        architecture=preset.task or preset_lib.BACKBONE, head=HEADS[preset.task],
        num_labels=preset.num_classes,
        pretraining_heads=["masked_lm"] if preset.task == preset_lib.MASKED_LM else [],
        vocab=preset.vocab_file, lower_case=preset.lower_case,
        max_position_embeddings=preset.config.max_position_embeddings, config=preset.config)
