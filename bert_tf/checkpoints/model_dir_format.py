"""The bert_tf model directory as a registry format: recognise, describe, read and write it.

The layout itself (`bert_config.json`, `vocab.txt`, `model.ckpt.*`, `model_info.json`) is
`bert_tf.model_dir`'s, the low-level module every trainer and exporter uses; this module
turns a model directory into a `Pretrained` and back, so conversions, `load_pretrained` and
`BertEncoder.from_pretrained` treat it like every other format. A training run's output
(`ckpt-N` and its `checkpoint` file beside `bert_config.json`) reads as one too.

Example:
>>> pretrained = read("/tmp/sst2_model_dir")                # doctest: +SKIP
>>> pretrained.head, pretrained.num_labels                   # doctest: +SKIP
('classifier', 2)
>>> write(pretrained, "/tmp/copy")                           # doctest: +SKIP
"""

import os

import keras
import tensorflow as tf

from bert_tf import model_dir as model_dir_lib
from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.format import FolderDescription, Format
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab, write_vocab
from bert_tf.tokenization import vocab as vocab_lib

NAME = "model_dir"
# A fine-tuned task head in the checkpoint; its bias length is the class count.
HEAD_BIAS = "head/bias/.ATTRIBUTES/VARIABLE_VALUE"
# The heads a model directory holds as one `Dense` named `head`.
TASK_HEADS = ("classifier", "token_classifier", "span_labeler", "multiple_choice")
# The checkpoint name of a training run's output (`training.checkpointing`).
_TRAINING_CHECKPOINT = "ckpt-"


def _folder(path):
    """The model directory of `path` (the directory, or its `model.ckpt` prefix)."""
    path = os.fspath(path).rstrip(os.sep) or os.sep
    if os.path.basename(path) == model_dir_lib.CHECKPOINT_PREFIX:
        return os.path.dirname(path)
    return path


def recognise(path):
    """A folder (or its `model.ckpt` prefix) with `bert_config.json` and a checkpoint:
    `model.ckpt.*`, or a training run's `checkpoint` file (not google-research's
    `bert_model.ckpt`)."""
    folder = _folder(path)
    if not os.path.isfile(os.path.join(folder, model_dir_lib.CONFIG_NAME)):
        return False
    if os.path.isfile(os.path.join(folder, model_dir_lib.CHECKPOINT_PREFIX + ".index")):
        return True
    if os.fspath(path) != folder or not os.path.isfile(os.path.join(folder, "checkpoint")):
        return False
    # A training run's: `Trainer`'s CheckpointManager names them `ckpt-N` (Model Garden's
    # converter writes `bert_model.ckpt-N` beside a `checkpoint` file too).
    latest = tf.train.latest_checkpoint(folder)
    return latest is not None and os.path.basename(latest).startswith(_TRAINING_CHECKPOINT)


def _variables(prefix):
    """{variable name: shape} of a TF checkpoint's index (no values read)."""
    try:
        return dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, ValueError) as error:
        raise model_dir_lib.checkpoint_read_error(prefix, error) from None


def _label_names(info):
    """`model_info.json`'s label names; None for the "0", "1"... of a model without names."""
    names = info.get("label_names")
    if names is None or names == [str(i) for i in range(len(names))]:
        return None
    return names


def describe(path):
    """A `FolderDescription` from `model_info.json` and the checkpoint's index."""
    folder = _folder(path)
    prefix = model_dir_lib.model_checkpoint_path(folder)
    info = model_dir_lib.read_model_info(folder)
    variables = _variables(prefix)
    description = FolderDescription(
        os.fspath(path), NAME, FORMAT.title, weights=[os.path.basename(prefix) + ".*"],
        head=info.get("head"), architecture=info.get("huggingface_architecture"),
        label_names=info.get("label_names"), problem_type=info.get("problem_type"),
        lower_case=info.get("do_lower_case"),
        max_position_embeddings=model_dir_lib.read_config(folder).max_position_embeddings)
    description.pretraining_heads = sorted(
        {name.split("/")[0] for name in variables} & set(weight_map.HEAD_GROUPS))
    if HEAD_BIAS in variables:
        description.num_labels = variables[HEAD_BIAS][0]
    elif description.label_names:
        description.num_labels = len(description.label_names)
    if os.path.isfile(model_dir_lib.vocab_path(folder)):
        description.vocab = model_dir_lib.vocab_path(folder)
    return description


def _vocab(folder, info, do_lower_case):
    """`(FolderVocab or None, lower_case)`: a directory without `vocab.txt` still gives its
    encoder (`BertEncoder.from_pretrained`); only tokenizing needs the vocab."""
    if not os.path.isfile(model_dir_lib.vocab_path(folder)):
        return None, info.get("do_lower_case", do_lower_case)
    vocab_file, lower_case = model_dir_lib.resolve_lower_case(folder, do_lower_case)
    where = os.path.join(folder, model_dir_lib.MODEL_INFO_NAME)
    return (FolderVocab(vocab_lib.load_vocab(vocab_file), vocab_file,
                        info.get("do_lower_case"), where), lower_case)


def read(path, do_lower_case=None):
    """Reads a model directory into a `Pretrained`: the encoder, the pretraining heads and
    the fine-tuned task head its checkpoint holds.

    Raises:
      FileNotFoundError: no directory, config or checkpoint.
      CheckpointError: a damaged checkpoint, one unlike the config, NaN/Inf weights, or a
        casing contradicting `model_info.json`.
    """
    folder = _folder(path)
    prefix = model_dir_lib.model_checkpoint_path(folder)
    config = model_dir_lib.read_config(folder)
    info = model_dir_lib.read_model_info(folder)
    vocab, lower_case = _vocab(folder, info, do_lower_case)
    variables = _variables(prefix)
    saved = {name.split("/")[0] for name in variables}
    encoder, heads = weight_map.build_models(
        config, [group for group in weight_map.HEAD_GROUPS if group in saved],
        os.path.join(folder, model_dir_lib.CONFIG_NAME))
    objects = dict(heads)
    head = "pretrainer" if heads else "encoder"
    if info.get("head") in TASK_HEADS and HEAD_BIAS in variables:
        objects["head"] = keras.layers.Dense(variables[HEAD_BIAS][0], dtype="float32",
                                             name="head")
        objects["head"].build((None, config.hidden_size))
        head = info["head"]
    model_dir_lib.restore_model_dir(folder, encoder=encoder, **objects)
    return Pretrained(
        format=NAME, path=folder, config=config, encoder=encoder, head=head, vocab=vocab,
        lower_case=lower_case, heads=heads, task_head=objects.get("head"),
        label_names=_label_names(info) if head in ("classifier", "token_classifier") else None,
        problem_type=info.get("problem_type") if head == "classifier" else None,
        has_pooler=True, max_seq_length=info.get("max_seq_length"),
        architecture=info.get("huggingface_architecture"), model_info=info)


def write(pretrained, output_dir):
    """Writes a `Pretrained` as a model directory, with its `model_info.json`.

    Returns:
      The checkpoint prefix written.
    """
    objects = dict(pretrained.heads)
    if pretrained.task_head is not None:
        objects["head"] = pretrained.task_head
    vocab = pretrained.require_vocab()
    prefix = model_dir_lib.write_model_dir(
        output_dir, pretrained.config, vocab_file=vocab.vocab_file,
        info=pretrained.model_dir_info(), encoder=pretrained.encoder, **objects)
    if vocab.vocab_file is None:
        write_vocab(vocab.tokens, model_dir_lib.vocab_path(output_dir))
    return prefix


FORMAT = Format(
    name=NAME, title="bert_tf model directory",
    layout="bert_config.json + model.ckpt.* + vocab.txt + model_info.json",
    recognise=recognise, describe=describe, read=read, write=write, aliases=("ours",))
