"""What a Hugging Face folder holds: its `BertFor*` architecture, head, labels and tensor names.

A folder is `config.json` plus weights: `model.safetensors` (or shards listed in
`model.safetensors.index.json`), else the `tf_model.h5` of a TensorFlow `TFBertFor*` (or
shards listed in `tf_model.h5.index.json`; `h5_file`). `config.json`'s `architectures[0]`
says which head the weights hold:

  BertModel                      encoder (pooler optional)
  BertForPreTraining             + masked-LM and next-sentence heads
  BertForMaskedLM                + masked-LM head (no pooler)
  BertForSequenceClassification  `classifier` on the pooled output: `id2label`, `problem_type`
                                 (single_label_classification, multi_label_classification,
                                 regression)
  BertForTokenClassification     `classifier` on every token (no pooler): `id2label`
  BertForQuestionAnswering       `qa_outputs`, start and end logits (no pooler)
  BertForMultipleChoice          `classifier`, one logit per choice on the pooled output

Everything here reads `config.json` and tensor shapes only (safetensors headers, h5
metadata), so `describe` and `read` share one set of checks.

Example:
>>> source, names = read_tensors("bert-sst2/")                         # doctest: +SKIP
>>> describe_head(read_json_object("bert-sst2/config.json"), source, names,
...               "bert-sst2/config.json")["label_names"]              # doctest: +SKIP
['negative', 'positive']
"""

import dataclasses
import os

from bert_tf.checkpoints.huggingface import h5_file, safetensors_file, shards
from bert_tf.checkpoints.weight_map import TASK_HEAD, Rule
from bert_tf.errors import CheckpointError

CONFIG_FILE = "config.json"
# The PyTorch names of the tensors that say which pretraining heads a folder holds.
PRETRAINING_KEYS = {"masked_lm": "cls.predictions.bias",
                    "next_sentence": "cls.seq_relationship.weight"}

# The weights files bert_tf reads, in the order it looks for them: each file's reader (a
# folder has one), and whether its tensors carry TF names.
READERS = {safetensors_file.WEIGHTS_FILE: (safetensors_file.read_safetensors, False),
           safetensors_file.INDEX_FILE: (safetensors_file.read_sharded, False),
           h5_file.WEIGHTS_FILE: (h5_file.read_h5, True),
           h5_file.INDEX_FILE: (h5_file.read_sharded, True)}
WEIGHTS_FILES = tuple(READERS)
PICKLE_FILE = "pytorch_model.bin"
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



def weights_file(folder):
    """The weights file of a Hugging Face folder: safetensors (or its index), else TF h5 (or
    its index).

    Raises:
      CheckpointError: only a `pytorch_model.bin` (a pickle, never read; how to convert it is
        said).
      FileNotFoundError: no weights.
    """
    for name in WEIGHTS_FILES:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    if os.path.exists(os.path.join(folder, PICKLE_FILE)):
        raise CheckpointError(
            f"{folder} holds only {PICKLE_FILE}, a Python pickle, which bert_tf never "
            "unpickles (loading one can run arbitrary code). Convert it to safetensors first "
            "where you trust the file, e.g. with transformers: "
            "`BertModel.from_pretrained(dir).save_pretrained(dir, safe_serialization=True)`.")
    raise FileNotFoundError(f"No {' or '.join(WEIGHTS_FILES)} in Hugging Face folder {folder}.")


def weights_files(folder):
    """The weights file of a folder and, for an index, the shards it names (for `describe`)."""
    path = weights_file(folder)
    return [path] + (shards.shard_files(path) if path.endswith(shards.INDEX_SUFFIX) else [])


class TensorNames:
    """The tensor names of one file format (PyTorch safetensors or TF h5)."""

    def __init__(self, tf_names):
        self.tf = tf_names
        self.table = h5_file.TABLE if tf_names else safetensors_file.TABLE

    def name(self, pt_name):
        """The format's name of a PyTorch tensor name (without `bert.`)."""
        return h5_file.NAMES[pt_name] if self.tf else pt_name

    def head_kernel(self, module):
        return f"{module}/kernel" if self.tf else f"{module}.weight"

    def head_rules(self, module):
        if self.tf:
            return h5_file.head_rules(TASK_HEAD, module)
        return (Rule(f"{TASK_HEAD}/kernel", f"{module}.weight", True),
                Rule(f"{TASK_HEAD}/bias", f"{module}.bias", False))

    def units(self, shape):
        """The output size of a head kernel of `shape` (PyTorch `[out, in]`, TF `[in, out]`)."""
        return shape[-1] if self.tf else shape[0]


def read_tensors(folder):
    """`(TensorSource, TensorNames)` of the folder's weights (safetensors, else TF h5)."""
    path = weights_file(folder)
    read, tf_names = READERS[os.path.basename(path)]
    return read(path), TensorNames(tf_names)


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


def pretraining_heads(source, names):
    """The pretraining heads (`masked_lm`, `next_sentence`) whose tensors the folder holds."""
    return [group for group, key in PRETRAINING_KEYS.items()
            if names.name(key) in source.shapes]


def describe_head(values, source, names, config_path):
    """What a folder's head is, from `config.json` and tensor shapes alone (no values read).

    Returns:
      {architecture, head, num_labels, label_names, problem_type, pretraining_heads}; the
      same checks as `reader.read` (labels against the head's shape, problem type).
    """
    architecture = _architecture(values, source, names, config_path)
    spec = ARCHITECTURES[architecture]
    pretraining = pretraining_heads(source, names)
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
