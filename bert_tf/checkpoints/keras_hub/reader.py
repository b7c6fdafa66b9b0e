"""Reads a keras-hub BERT preset's config and weights, without keras-hub.

The backbone becomes the encoder's weights (`hidden_act` gelu_approximate, keras-hub's), a
`BertTextClassifier`'s `logits` Dense the task head (what `TextClassifier.from_pretrained`
keeps), a `BertMaskedLM`'s head the `masked_lm` pretraining head (exact GELU, LayerNorm
epsilon 1e-5, as keras-hub computes it: the config's `masked_lm_hidden_act` and
`masked_lm_layer_norm_eps`, so every model rebuilt from it, a model directory's included,
computes the same), the tokenizer's vocabulary and `lowercase` the vocab
and casing, and the preprocessor's `sequence_length` the `max_seq_length`. Every weight goes
through `weights_file.TABLE` and `weight_map.translate` (shapes checked first, every tensor
used once).

Example:
>>> pretrained = read("bert_classifier_preset/")  # doctest: +SKIP
>>> pretrained.head, pretrained.num_labels, pretrained.max_seq_length  # doctest: +SKIP
('classifier', 3, 24)
"""

import os

from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.keras_hub import preset as preset_lib
from bert_tf.checkpoints.keras_hub import weights_file
from bert_tf.checkpoints.keras_hub.layout import HEADS, NAME
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.errors import CheckpointError
from bert_tf.tokenization import vocab as vocab_lib


def _weights_files(preset):
    """`{prefix: path}` of the preset's weights files, each required where the JSON needs it."""
    model = preset.path(weights_file.MODEL_WEIGHTS_FILE)
    if not os.path.isfile(model):
        if preset.has(preset_lib.SHARDED_WEIGHTS_FILE):
            raise CheckpointError(
                f"{preset.folder}: sharded keras-hub weights ({preset_lib.SHARDED_WEIGHTS_FILE}"
                " + model_*.weights.h5) are not read; save the preset with a larger "
                "max_shard_size.")
        raise FileNotFoundError(f"No {weights_file.MODEL_WEIGHTS_FILE} in keras-hub preset "
                                f"{preset.folder}.")
    files = {"": model}
    task = preset.path(weights_file.TASK_WEIGHTS_FILE)
    if preset.task is not None and not os.path.isfile(task):
        raise FileNotFoundError(f"No {weights_file.TASK_WEIGHTS_FILE} in keras-hub preset "
                                f"{preset.folder}, whose {preset_lib.TASK_FILE} is a "
                                f"{preset.task}: its head's weights are missing.")
    if os.path.isfile(task):
        files[weights_file.TASK] = task
    return files


def _vocab(preset, vocab_file=None):
    """The tokenizer's `FolderVocab` (vocabulary.txt, casing from tokenizer.json); for a
    preset saved without its tokenizer (`backbone.save_to_preset`), `vocab_file`'s, or None
    (its encoder reads without one)."""
    if preset.vocab_file is not None and vocab_file is not None:
        raise CheckpointError(f"keras-hub preset {preset.folder} has its own vocabulary "
                              f"({preset.vocab_file}); drop --vocab_file.")
    if preset.vocab_file is None:
        if preset.has(preset_lib.TOKENIZER_FILE):
            raise FileNotFoundError(
                f"No {preset_lib.VOCAB_FILE} in keras-hub preset {preset.folder}, beside its "
                f"{preset_lib.TOKENIZER_FILE} (an interrupted copy?): save the preset again.")
        if vocab_file is None:
            return None
        return FolderVocab(list(vocab_lib.load_vocab(vocab_file)), vocab_file=vocab_file)
    tokens = vocab_lib.load_vocab(preset.vocab_file)
    if len(tokens) > preset.config.vocab_size:
        raise CheckpointError(
            f"{preset.vocab_file}: {len(tokens)} tokens, but {preset_lib.CONFIG_FILE}'s "
            f"vocabulary_size is {preset.config.vocab_size}.")
    return FolderVocab(list(tokens), vocab_file=preset.vocab_file,
                       lower_case=preset.lower_case,
                       where=preset.path(preset_lib.TOKENIZER_FILE))


def read(path, do_lower_case=None, vocab_file=None):
    """Reads a keras-hub BERT preset into a `Pretrained`.

    `vocab_file` gives the vocabulary of a preset saved without its tokenizer; without one
    such a preset reads with `vocab` None (an encoder; tokenizing needs the vocabulary).

    Raises:
      FileNotFoundError: no weights file.
      CheckpointError: a preset of another architecture (named), a task or tokenizer bert_tf
        does not read, or weights unlike the config (file and dataset named).
    """
    preset = preset_lib.read_preset(path)
    files = _weights_files(preset)
    vocab = _vocab(preset, vocab_file)
    lower_case = vocab.choose_lower_case(do_lower_case) if vocab else do_lower_case
    config = preset.config
    heads = ["masked_lm"] if preset.task == preset_lib.MASKED_LM else []
    classifier = preset.task == preset_lib.CLASSIFIER
    source = weights_file.read_weights(files, config)  # shapes only; values when translated
    shapes = weight_map.expected_shapes(config, heads,
                                        preset.num_classes if classifier else None,
                                        where=preset.path(preset_lib.CONFIG_FILE), source=source)
    rules = weights_file.expand(config, heads)
    if classifier:
        rules += weights_file.classifier_rules(weight_map.TASK_HEAD)
    weights = weight_map.translate(source, rules, shapes)
    logging.info("Read keras-hub preset %s (%s, %d tensors).", path,
                 preset.task or preset_lib.BACKBONE, len(rules))
    return Pretrained(
        format=NAME, path=os.fspath(path), config=config, weights=weights,
        head=HEADS[preset.task], vocab=vocab, lower_case=lower_case,
        problem_type="single_label_classification" if classifier else None,
        dropout_rate=preset.dropout_rate, max_seq_length=preset.sequence_length,
        model_info={"source": NAME, "keras_hub_class": preset.task or preset_lib.BACKBONE})


