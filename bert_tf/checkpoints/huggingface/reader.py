"""Reads a Hugging Face folder (any `BertFor*`, PyTorch safetensors or TF h5, either sharded)
into a `Pretrained`.

Pretraining-head tensors are read whatever the architecture says (bert-base-uncased calls
itself BertForMaskedLM and holds the NSP head too); every tensor must map to a weight, every
shape must fit the config, and a missing one is an error naming the file and the key, as in
`weight_map.translate`. Nothing is unpickled.

Example:
>>> pretrained = read("bert-sst2/")                                  # doctest: +SKIP
>>> pretrained.head, pretrained.label_names, pretrained.problem_type  # doctest: +SKIP
('classifier', ['negative', 'positive'], 'single_label_classification')
>>> logits = pretrained.build_model()(inputs)                        # doctest: +SKIP
"""

import os

import numpy as np
from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.huggingface import architectures, safetensors_file
from bert_tf.checkpoints.huggingface.architectures import ARCHITECTURES, CONFIG_FILE
from bert_tf.checkpoints.huggingface.layout import NAME
from bert_tf.checkpoints.huggingface.sentence_transformers import read_sentence_pooling
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import TOKENIZER_FILE, VOCAB_FILE, read_folder_vocab
from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object


def _vocab(folder, do_lower_case):
    """`(FolderVocab or None, lower_case)`: a folder without `vocab.txt` or `tokenizer.json`
    still gives its encoder (`BertEncoder.from_pretrained`); tokenizing needs the vocab."""
    if not any(os.path.isfile(os.path.join(folder, name)) for name in (VOCAB_FILE, TOKENIZER_FILE)):
        return None, do_lower_case
    vocab = read_folder_vocab(folder)
    return vocab, vocab.choose_lower_case(do_lower_case)


def _check_tied(source):
    """Refuses a folder whose saved copies of tied weights differ from the originals."""
    for copy, original in safetensors_file.TIED.items():
        if copy in source.shapes and original in source.shapes:
            if (source.shapes[copy] != source.shapes[original]
                    or not np.array_equal(source.read(copy), source.read(original))):
                raise CheckpointError(
                    f"Checkpoint {source.where}: `{copy}` differs from `{original}`; bert_tf "
                    "ties them, so it cannot hold this model.")


def _check_required(source, names, spec, architecture, heads, has_pooler):
    """Refuses a folder lacking what its architecture must hold (pretraining heads, pooler)."""
    for group, key in architectures.PRETRAINING_KEYS.items():
        if group in spec.pretraining and group not in heads:
            raise CheckpointError(f"Checkpoint {source.where} ({architecture}) lacks "
                                  f"`{names.name(key)}`, so its {group} head is missing.")
    if spec.pooler and not has_pooler:
        raise CheckpointError(f"Checkpoint {source.where} ({architecture}) lacks "
                              f"`{names.name('pooler.dense.weight')}`: its head reads the "
                              "pooled output.")


def read(path, do_lower_case=None):
    """Reads a Hugging Face folder into a `Pretrained` (the `Format.read` of `huggingface`).

    Raises:
      FileNotFoundError: no `config.json`, weights or vocab.
      CheckpointError: an unknown architecture, a pickle-only folder, tensors missing, unused
        or of the wrong shape, labels unlike the head, or a casing contradicting the folder's;
        the file and key are named.
      ConfigError: a config bert_tf cannot build.
    """
    folder = os.fspath(path)
    config_path = os.path.join(folder, CONFIG_FILE)
    architectures.weights_file(folder)  # a missing or pickle-only folder first
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"No {CONFIG_FILE} in Hugging Face folder {folder}.")
    vocab, lower_case = _vocab(folder, do_lower_case)
    values = read_json_object(config_path)
    architectures.check_model_type(values, config_path)
    config = BertConfig.from_dict(values, source=config_path)
    source, names = architectures.read_tensors(folder)
    described = architectures.describe_head(values, source, names, config_path)
    architecture, heads = described["architecture"], described["pretraining_heads"]
    spec = ARCHITECTURES[architecture]
    has_pooler = names.name("pooler.dense.weight") in source.shapes
    _check_required(source, names, spec, architecture, heads, has_pooler)
    if not names.tf:
        _check_tied(source)

    units = None
    if spec.task_head is not None:
        units = described["num_labels"]
        if spec.units is not None and units != spec.units:
            raise CheckpointError(
                f"Checkpoint {source.where}: tensor "
                f"`{source.label(names.head_kernel(spec.task_head))}` has {units} outputs; "
                f"{architecture} has {spec.units}.")
    shapes = weight_map.expected_shapes(config, heads, units, where=config_path, source=source)
    rules = weight_map.expand(names.table, config.num_hidden_layers, heads)
    if units is not None:
        rules += names.head_rules(spec.task_head)
    if not has_pooler:
        rules = [rule for rule in rules if not rule.target.startswith("pooler/")]
        shapes = {path: shape for path, shape in shapes.items() if not path.startswith("pooler/")}
    weights = weight_map.translate(source, rules, shapes, ignored=safetensors_file.IGNORED
                                   + tuple(safetensors_file.TIED))
    if not has_pooler and architecture == "BertModel":
        logging.warning("%s holds no pooler weights; the pooled output is untrained.",
                        source.where)
    dropout = values.get("classifier_dropout")
    sentence_pooling = read_sentence_pooling(folder)
    logging.info("Read %s (%s, %d tensors).", source.where, architecture, len(rules))
    return Pretrained(
        format=NAME, path=folder, config=config, weights=weights,
        head=described["head"], vocab=vocab, lower_case=lower_case,
        label_names=described["label_names"],
        problem_type=described["problem_type"],
        dropout_rate=dropout if isinstance(dropout, (int, float)) else None,
        architecture=architecture, sentence_pooling=sentence_pooling,
        max_seq_length=sentence_pooling and sentence_pooling.max_seq_length,
        model_info={"source": NAME})
