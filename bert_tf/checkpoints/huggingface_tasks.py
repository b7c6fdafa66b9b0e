"""Hugging Face task folders (`BertFor*`, PyTorch or TF) read into bert_tf models.

A folder is `config.json` plus weights: `model.safetensors` (or shards listed in
`model.safetensors.index.json`), else the `tf_model.h5` of a TensorFlow `TFBertFor*`
(`huggingface_h5`). `config.json`'s `architectures[0]` says which head the weights hold:

  BertModel                      encoder (pooler optional)
  BertForPreTraining             + masked-LM and next-sentence heads
  BertForMaskedLM                + masked-LM head (no pooler)
  BertForSequenceClassification  `classifier` on the pooled output: `id2label`, `problem_type`
                                 (single_label_classification, multi_label_classification,
                                 regression)
  BertForTokenClassification     `classifier` on every token (no pooler): `id2label`
  BertForQuestionAnswering       `qa_outputs`, start and end logits (no pooler)
  BertForMultipleChoice          `classifier`, one logit per choice on the pooled output

Pretraining-head tensors are read whatever the architecture says (bert-base-uncased calls
itself BertForMaskedLM and holds the NSP head too); every tensor must map to a weight, every
shape must fit the config, and a missing one is an error naming the file and the key, as in
`weight_map.assign_from`. Nothing is unpickled.

Example:
>>> task = load_huggingface_task("bert-sst2/")       # doctest: +SKIP
>>> task.head, task.label_names, task.problem_type   # doctest: +SKIP
('classifier', ['negative', 'positive'], 'single_label_classification')
>>> logits = task.build_model()(inputs)              # doctest: +SKIP
"""

import dataclasses
import os

import keras
import numpy as np
from absl import logging

from bert_tf.checkpoints import huggingface, huggingface_h5, weight_map
from bert_tf.model_dir import CheckpointError, read_json_object, vocab_path, write_model_dir
from bert_tf.checkpoints.tokenizer_json import read_folder_vocab, write_vocab
from bert_tf.checkpoints.weight_map import Rule
from bert_tf.configs import BertConfig
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer,
                            BertSpanLabeler, BertTokenClassifier)

CONFIG_FILE = huggingface.CONFIG_FILE
SAFETENSORS_FILE = huggingface.WEIGHTS_FILE
SAFETENSORS_INDEX = SAFETENSORS_FILE + ".index.json"
H5_FILE = huggingface_h5.WEIGHTS_FILE
# Our name of the standalone task-head layer the folder's head is read into.
TASK_HEAD = "task_head"

PROBLEM_TYPES = ("single_label_classification", "multi_label_classification", "regression")


@dataclasses.dataclass(frozen=True)
class Architecture:
    """What a `BertFor*` class holds.

    Attributes:
      head: the model directory's `head` (`model_dir.HEADS`) of the bert_tf model it becomes.
      task_head: the PyTorch module name of its task head (`classifier`, `qa_outputs`).
      units: the head's fixed output size (None: the number of labels).
      pooler: the head reads the pooled output, so the pooler weights are required.
      pretraining: the pretraining heads it must hold.
    """

    head: str
    task_head: str = None
    units: int = None
    pooler: bool = False
    pretraining: tuple = ()


ARCHITECTURES = {
    "BertModel": Architecture("encoder"),
    "BertForPreTraining": Architecture("pretrainer", pooler=True,
                                       pretraining=("masked_lm", "next_sentence")),
    "BertForMaskedLM": Architecture("pretrainer", pretraining=("masked_lm",)),
    "BertForSequenceClassification": Architecture("classifier", "classifier", pooler=True),
    "BertForTokenClassification": Architecture("token_classifier", "classifier"),
    "BertForQuestionAnswering": Architecture("span_labeler", "qa_outputs", units=2),
    "BertForMultipleChoice": Architecture("multiple_choice", "classifier", units=1,
                                          pooler=True),
}
# The architecture a bert_tf model directory head exports as.
EXPORT_ARCHITECTURES = {"encoder": "BertModel", "pretrainer": "BertForPreTraining",
                        "classifier": "BertForSequenceClassification",
                        "token_classifier": "BertForTokenClassification",
                        "span_labeler": "BertForQuestionAnswering",
                        "multiple_choice": "BertForMultipleChoice"}


@dataclasses.dataclass
class HuggingFaceTask:
    """A Hugging Face folder read into bert_tf layers, weights loaded.

    Attributes:
      architecture: `config.json`'s architecture (inferred from the tensors when absent).
      head: the model directory's `head` it becomes (`model_dir.HEADS`).
      config: the encoder's `BertConfig`.
      encoder: the `BertEncoder`.
      heads: the pretraining heads held (`masked_lm`, `next_sentence`), keyed as
        `BertPretrainer.checkpoint_items()`.
      task_head: the task head as a built float32 `keras.layers.Dense` (kernel `[H, units]`),
        or None.
      label_names: names of the outputs from `id2label` (classification and tagging), or None.
      problem_type: a sequence classifier's `problem_type` (None for other architectures).
      dropout_rate: `classifier_dropout` of the config, or None (the hidden dropout).
      weights_file: the file the weights were read from (the index for shards).
      has_pooler: whether the checkpoint held pooler weights (else the encoder's are
        untrained: BertFor{TokenClassification,QuestionAnswering,MaskedLM} have none).
    """

    architecture: str
    head: str
    config: BertConfig
    encoder: BertEncoder
    heads: dict
    task_head: keras.layers.Dense = None
    label_names: list = None
    problem_type: str = None
    dropout_rate: float = None
    weights_file: str = None
    has_pooler: bool = True

    @property
    def num_labels(self):
        """The task head's output count, or None without one."""
        return None if self.task_head is None else self.task_head.units

    def model_dir_info(self):
        """`model_info.json` entries of this task (`head`, `label_names`, `problem_type`)."""
        info = {"head": self.head, "source": "huggingface",
                "huggingface_architecture": self.architecture}
        if self.label_names is not None:
            info["label_names"] = list(self.label_names)
        if self.problem_type is not None:
            info["problem_type"] = self.problem_type
        return info

    def build_model(self, num_choices=None):
        """The bert_tf model of this architecture on `encoder`, head weights copied in.

        BertModel gives the `BertEncoder`; BertForPreTraining / BertForMaskedLM a
        `BertPretrainer`; the others `BertClassifier`, `BertTokenClassifier`,
        `BertSpanLabeler` and `BertMultipleChoice` (which needs `num_choices`).
        """
        if self.head == "encoder":
            return self.encoder
        if self.head == "pretrainer":
            model = BertPretrainer(self.encoder,
                                   use_next_sentence="next_sentence" in self.heads)
            for key, layer in self.heads.items():
                getattr(model, key).set_weights(layer.get_weights())
            return model
        if self.head == "multiple_choice":
            if num_choices is None:
                raise ValueError("A BertForMultipleChoice folder builds a BertMultipleChoice: "
                                 "pass num_choices (choices per example).")
            model = BertMultipleChoice(self.encoder, num_choices, dropout_rate=self.dropout_rate)
        elif self.head == "span_labeler":
            model = BertSpanLabeler(self.encoder)
        else:
            model_class = BertClassifier if self.head == "classifier" else BertTokenClassifier
            model = model_class(self.encoder, self.num_labels, dropout_rate=self.dropout_rate)
        model.head.set_weights(self.task_head.get_weights())
        return model


def weights_file(folder):
    """The weights file of a Hugging Face folder: safetensors (or its index), else TF h5.

    Raises:
      CheckpointError: only a `pytorch_model.bin` (a pickle, never read).
      FileNotFoundError: no weights.
    """
    for name in (SAFETENSORS_FILE, SAFETENSORS_INDEX, H5_FILE):
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    huggingface._weights_files(folder)  # the pickle-only error, else FileNotFoundError
    raise FileNotFoundError(f"No {SAFETENSORS_FILE} or {H5_FILE} in {folder}.")  # unreachable


def has_weights(folder):
    """Whether `folder` holds Hugging Face weights bert_tf reads (safetensors or TF h5)."""
    return any(os.path.isfile(os.path.join(folder, name))
               for name in (SAFETENSORS_FILE, SAFETENSORS_INDEX, H5_FILE))


class _Format:
    """The tensor names of one file format (PyTorch safetensors or TF h5)."""

    def __init__(self, tf_names):
        self.tf = tf_names
        self.table = huggingface_h5.TABLE if tf_names else huggingface.TABLE

    def name(self, pt_name):
        """The format's name of a PyTorch tensor name (without `bert.`)."""
        return huggingface_h5.NAMES[pt_name] if self.tf else pt_name

    def head_kernel(self, module):
        return f"{module}/kernel" if self.tf else f"{module}.weight"

    def head_rules(self, module):
        if self.tf:
            return huggingface_h5.head_rules(TASK_HEAD, module)
        return (Rule(f"{TASK_HEAD}/kernel", f"{module}.weight", True),
                Rule(f"{TASK_HEAD}/bias", f"{module}.bias", False))

    def units(self, shape):
        """The output size of a head kernel of `shape` (PyTorch `[out, in]`, TF `[in, out]`)."""
        return shape[-1] if self.tf else shape[0]


def read_tensors(folder):
    """`(TensorSource, _Format)` of the folder's weights (safetensors, else TF h5)."""
    path = weights_file(folder)
    if path.endswith(".h5"):
        return huggingface_h5.read_h5(path), _Format(tf_names=True)
    source = huggingface.read_safetensors(folder)
    source.where = path
    return source, _Format(tf_names=False)


def _architecture(values, source, names, config_path):
    architectures = values.get("architectures")
    if architectures is None:  # older or hand-made configs: the tensors say
        for module, name in (("qa_outputs", "BertForQuestionAnswering"),
                             ("classifier", None)):
            if names.head_kernel(module) in source.shapes:
                if name is None:
                    raise CheckpointError(
                        f"{config_path} has no `architectures`, and `{module}` could be a "
                        "sequence, token or multiple-choice head: add e.g. \"architectures\": "
                        "[\"BertForSequenceClassification\"].")
                return name
        return "BertModel"
    if (not isinstance(architectures, list) or not architectures
            or not all(isinstance(a, str) for a in architectures)):
        raise CheckpointError(f"{config_path}: `architectures` must be a list of class names; "
                              f"got {architectures!r}.")
    if architectures[0] not in ARCHITECTURES:
        raise CheckpointError(
            f"{config_path}: architecture {architectures[0]!r} is not one bert_tf reads; it "
            f"reads {', '.join(ARCHITECTURES)}.")
    return architectures[0]


def check_model_type(values, config_path):
    """Refuses a config of another model family (`model_type` roberta, distilbert...)."""
    model_type = values.get("model_type")
    if model_type is not None and model_type != "bert":
        architectures = values.get("architectures")
        held = f" ({architectures[0]})" if isinstance(architectures, list) and architectures else ""
        raise CheckpointError(
            f"{config_path}: model_type {model_type!r}{held}, not BERT; bert_tf reads BERT "
            "checkpoints (model_type \"bert\") only.")


def _task_head_units(source, names, spec, architecture):
    """`(kernel name, units)` of the folder's task head, its shape checked (one line if not)."""
    kernel = names.head_kernel(spec.task_head)
    shape = source.shapes.get(kernel)
    if shape is None:
        raise CheckpointError(f"Checkpoint {source.where} ({architecture}) lacks "
                              f"`{source.label(kernel)}`, its task head.")
    if len(shape) != 2 or names.units(shape) < 1:
        raise CheckpointError(f"Checkpoint {source.where}: tensor `{source.label(kernel)}` "
                              f"has shape {list(shape)}; a dense kernel has two axes.")
    return kernel, names.units(shape)


def describe_head(values, source, names, config_path):
    """What a folder's head is, from `config.json` and tensor shapes alone (no values read).

    Returns:
      {architecture, head, num_labels, label_names, problem_type, pretraining_heads}; the
      same checks as `load_huggingface_task` (labels against the head's shape, problem type).
    """
    architecture = _architecture(values, source, names, config_path)
    spec = ARCHITECTURES[architecture]
    pretraining = [group for group, key in (("masked_lm", "cls.predictions.bias"),
                                            ("next_sentence", "cls.seq_relationship.weight"))
                   if names.name(key) in source.shapes]
    result = {"architecture": architecture, "num_labels": None, "label_names": None,
              "problem_type": None, "pretraining_heads": pretraining,
              "head": "pretrainer" if spec.head == "encoder" and pretraining else spec.head}
    if spec.task_head is not None:
        kernel, units = _task_head_units(source, names, spec, architecture)
        result["num_labels"] = units
        if spec.units is None:
            result["label_names"] = _label_names(values, units, config_path,
                                                 source.label(kernel))
            if architecture == "BertForSequenceClassification":
                result["problem_type"] = _problem_type(values, units, config_path)
                if result["problem_type"] == "regression":
                    result["label_names"] = None
    return result


def _label_names(values, num_labels, config_path, kernel):
    """`id2label` as a list, checked against the head's size (transformers' default names
    LABEL_0... when absent)."""
    declared = values.get("num_labels")
    if declared is not None and declared != num_labels:
        raise CheckpointError(f"{config_path}: `num_labels` is {declared!r}, but `{kernel}` has "
                              f"{num_labels} outputs.")
    id2label = values.get("id2label")
    if id2label is None:
        return [f"LABEL_{i}" for i in range(num_labels)]
    if not isinstance(id2label, dict):
        raise CheckpointError(f"{config_path}: `id2label` must be an object of id to name.")
    names = {}
    for key, name in id2label.items():
        try:
            index = int(key)
        except ValueError:
            index = None
        if index is None or not isinstance(name, str):
            raise CheckpointError(f"{config_path}: `id2label` entry {key!r}: {name!r} is not "
                                  "an integer id with a name.")
        names[index] = name
    missing = [i for i in range(num_labels) if i not in names and i < max(names, default=0)]
    if missing:  # gaps among the ids named
        raise CheckpointError(
            f"{config_path}: `id2label` lacks ids {missing}; `{kernel}` has {num_labels} "
            f"outputs (ids 0..{num_labels - 1}), each needs a name.")
    if sorted(names) != list(range(num_labels)):
        raise CheckpointError(
            f"{config_path}: `id2label` names ids {sorted(names)}, but `{kernel}` has "
            f"{num_labels} outputs (ids 0..{num_labels - 1}).")
    return [names[i] for i in range(num_labels)]


def _problem_type(values, num_labels, config_path):
    problem_type = values.get("problem_type")
    if problem_type is None:  # transformers decides at training time; 1 output regresses
        problem_type = "regression" if num_labels == 1 else "single_label_classification"
    if problem_type not in PROBLEM_TYPES:
        raise CheckpointError(f"{config_path}: `problem_type` is {problem_type!r}; expected "
                              f"one of {', '.join(PROBLEM_TYPES)}.")
    if (problem_type == "regression") != (num_labels == 1):
        raise CheckpointError(
            f"{config_path}: `problem_type` {problem_type} with {num_labels} output(s): "
            "bert_tf regresses one value and classifies two or more.")
    return problem_type


def _check_tied(source):
    for copy, original in huggingface.TIED.items():
        if copy in source.shapes and original in source.shapes:
            if (source.shapes[copy] != source.shapes[original]
                    or not np.array_equal(source.read(copy), source.read(original))):
                raise CheckpointError(
                    f"Checkpoint {source.where}: `{copy}` differs from `{original}`; bert_tf "
                    "ties them, so it cannot hold this model.")


def load_huggingface_task(folder):
    """Reads a Hugging Face folder (any architecture above, PyTorch or TF) into bert_tf layers.

    Returns:
      A `HuggingFaceTask`.

    Raises:
      FileNotFoundError: no `config.json` or weights.
      CheckpointError: an unknown architecture, a pickle-only folder, tensors missing, unused
        or of the wrong shape, or labels unlike the head; the file and key are named.
      ConfigError: a config bert_tf cannot build.
    """
    folder = os.fspath(folder)
    config_path = os.path.join(folder, CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"No {CONFIG_FILE} in Hugging Face folder {folder}.")
    values = read_json_object(config_path)
    check_model_type(values, config_path)
    config = BertConfig.from_dict(values, source=config_path)
    source, names = read_tensors(folder)
    architecture = _architecture(values, source, names, config_path)
    spec = ARCHITECTURES[architecture]

    heads = [group for group, key in (("masked_lm", "cls.predictions.bias"),
                                      ("next_sentence", "cls.seq_relationship.weight"))
             if names.name(key) in source.shapes]
    for group, key in (("masked_lm", "cls.predictions.bias"),
                       ("next_sentence", "cls.seq_relationship.weight")):
        if group in spec.pretraining and group not in heads:
            raise CheckpointError(f"Checkpoint {source.where} ({architecture}) lacks "
                                  f"`{names.name(key)}`, so its {group} head is missing.")
    has_pooler = names.name("pooler.dense.weight") in source.shapes
    if spec.pooler and not has_pooler:
        raise CheckpointError(f"Checkpoint {source.where} ({architecture}) lacks "
                              f"`{names.name('pooler.dense.weight')}`: its head reads the "
                              "pooled output.")
    if not names.tf:
        _check_tied(source)

    encoder, head_layers = weight_map.build_models(config, heads)
    rules = weight_map.expand(names.table, config.num_hidden_layers, heads)
    weights = weight_map.model_weights(encoder, *head_layers.values())
    if not has_pooler:
        rules = [rule for rule in rules if not rule.target.startswith("pooler/")]
        weights = {path: w for path, w in weights.items() if not path.startswith("pooler/")}
    task_head, label_names, problem_type = None, None, None
    if spec.task_head is not None:
        kernel, units = _task_head_units(source, names, spec, architecture)
        if spec.units is not None and units != spec.units:
            raise CheckpointError(
                f"Checkpoint {source.where}: tensor `{source.label(kernel)}` has {units} "
                f"outputs; {architecture} has {spec.units}.")
        task_head = keras.layers.Dense(units, dtype="float32", name=TASK_HEAD)
        task_head.build((None, config.hidden_size))
        rules += names.head_rules(spec.task_head)
        weights.update(weight_map.model_weights(task_head))
        if spec.units is None:
            label_names = _label_names(values, units, config_path, source.label(kernel))
            if architecture == "BertForSequenceClassification":
                problem_type = _problem_type(values, units, config_path)
                if problem_type == "regression":
                    label_names = None
    weight_map.assign_from(source, rules, weights,
                           ignored=huggingface.IGNORED + tuple(huggingface.TIED))
    if not has_pooler and architecture == "BertModel":
        logging.warning("%s holds no pooler weights; the pooled output is untrained.",
                        source.where)
    dropout = values.get("classifier_dropout")
    head = spec.head
    if head == "encoder" and heads:
        head = "pretrainer"
    logging.info("Read %s (%s, %d tensors).", source.where, architecture, len(rules))
    return HuggingFaceTask(
        architecture=architecture, head=head, config=config, encoder=encoder,
        heads=head_layers, task_head=task_head, label_names=label_names,
        problem_type=problem_type,
        dropout_rate=dropout if isinstance(dropout, (int, float)) else None,
        weights_file=source.where, has_pooler=has_pooler)


def convert_huggingface_checkpoint(hf_dir, model_dir, do_lower_case=None):
    """Writes a Hugging Face folder as a bert_tf model directory: the encoder, pretraining
    heads or the task head (as `head`), and `model_info.json` (head, casing, label names,
    problem type). Any architecture `load_huggingface_task` reads, PyTorch or TF.

    Args:
      do_lower_case: the model's casing; None takes `tokenizer_config.json`'s (or
        `tokenizer.json`'s), else guesses it from the vocab. A value contradicting the
        folder's is an error.

    Returns:
      The checkpoint prefix written.
    """
    weights_file(hf_dir)  # a missing or pickle-only folder first
    vocab = read_folder_vocab(hf_dir)
    lower_case = vocab.choose_lower_case(do_lower_case)
    task = load_huggingface_task(hf_dir)
    info = dict(task.model_dir_info(), do_lower_case=lower_case)
    objects = dict(task.heads)
    if task.task_head is not None:
        objects["head"] = task.task_head
    prefix = write_model_dir(model_dir, task.config, vocab_file=vocab.vocab_file, info=info,
                             encoder=task.encoder, **objects)
    if vocab.vocab_file is None:
        write_vocab(vocab.tokens, vocab_path(model_dir))
    return prefix
