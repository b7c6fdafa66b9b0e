"""Writes bert_tf models as Hugging Face folders of their task's `BertFor*` architecture.

`export_huggingface_checkpoint(model or model_dir, out)` writes what transformers'
`AutoModelFor*.from_pretrained(out)` and `AutoTokenizer.from_pretrained(out)` read:
`config.json` (`architectures`, `id2label` / `label2id`, `problem_type`), `model.safetensors`
(PyTorch names and layouts), `vocab.txt` and `tokenizer_config.json` (the casing). The
architecture follows the head:

  BertEncoder, SentenceEncoder                  BertModel
  BertPretrainer with NSP                       BertForPreTraining
  BertPretrainer without NSP, MaskedLM          BertForMaskedLM
  BertClassifier, TextClassifier                BertForSequenceClassification
  BertTokenClassifier, TokenClassifier          BertForTokenClassification
  BertSpanLabeler                               BertForQuestionAnswering
  BertMultipleChoice                            BertForMultipleChoice

A model directory exports by its `model_info.json` `head` (label names and problem type from
there too). Architectures that transformers builds without a pooler (masked LM, tokens,
spans) are written without one, so it loads them with no unexpected keys.

Example:
>>> export_huggingface_checkpoint(TextClassifier.from_pretrained("sst2_model_dir/"),
...                               "/tmp/sst2_hf")  # doctest: +SKIP
"""

import contextlib
import dataclasses
import json
import os
import shutil

import keras
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import huggingface, weight_map
from bert_tf.checkpoints.huggingface_tasks import EXPORT_ARCHITECTURES
from bert_tf.model_dir import (
    model_checkpoint_path, read_config, read_model_info, restore_model_dir, vocab_path)
from bert_tf.checkpoints.weight_map import Rule
from bert_tf.configs import BertConfig
from bert_tf.errors import require_extra
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer,
                            BertSpanLabeler, BertTokenClassifier)

TOKENIZER_CONFIG_FILE = huggingface.TOKENIZER_CONFIG_FILE
# The PyTorch module of each task head, and the architectures without a pooler.
HEAD_MODULES = {"classifier": "classifier", "token_classifier": "classifier",
                "span_labeler": "qa_outputs", "multiple_choice": "classifier"}
NO_POOLER = ("BertForMaskedLM", "BertForTokenClassification", "BertForQuestionAnswering")
# A model directory's checkpoint key of a fine-tuned head's bias.
_HEAD_BIAS = "head/bias/.ATTRIBUTES/VARIABLE_VALUE"


@dataclasses.dataclass
class _Export:
    config: BertConfig
    encoder: BertEncoder
    head: str  # model_dir.HEADS
    heads: dict = dataclasses.field(default_factory=dict)  # pretraining heads
    task_head: keras.layers.Dense = None
    label_names: list = None
    problem_type: str = None
    lower_case: bool = None
    preprocessor: object = None  # vocab source of a Keras task model
    vocab_file: str = None

    @property
    def architecture(self):
        if self.head == "pretrainer" and "next_sentence" not in self.heads:
            return "BertForMaskedLM"
        return EXPORT_ARCHITECTURES[self.head]


def _from_model_dir(model_dir):
    config, info = read_config(model_dir), read_model_info(model_dir)
    shapes = dict(tf.train.list_variables(model_checkpoint_path(model_dir)))
    saved = {name.split("/")[0] for name in shapes}
    head = info.get("head")
    if head in HEAD_MODULES and _HEAD_BIAS in shapes:
        encoder = BertEncoder(config)
        task_head = keras.layers.Dense(shapes[_HEAD_BIAS][0], dtype="float32", name="head")
        task_head.build((None, config.hidden_size))
        restore_model_dir(model_dir, encoder=encoder, head=task_head)
        names = info.get("label_names") if head in ("classifier", "token_classifier") else None
        if names == [str(i) for i in range(len(names or []))]:
            names = None  # save_model_dir's "0", "1"... of a model without names
        return _Export(config, encoder, head, task_head=task_head, label_names=names,
                       problem_type=info.get("problem_type"),
                       lower_case=info.get("do_lower_case"), vocab_file=vocab_path(model_dir))
    heads = [group for group in weight_map.HEAD_GROUPS if group in saved]
    encoder, head_layers = weight_map.build_models(config, heads)
    restore_model_dir(model_dir, encoder=encoder, **head_layers)
    return _Export(config, encoder, "pretrainer" if heads else "encoder", heads=head_layers,
                   lower_case=info.get("do_lower_case"), vocab_file=vocab_path(model_dir))


def _from_model(model):
    preprocessor = getattr(model, "preprocessor", None)
    lower_case = None if preprocessor is None else preprocessor.lower_case
    if isinstance(model, BertEncoder):
        return _Export(model.config, model, "encoder")
    encoder = getattr(model, "encoder", None)
    if not isinstance(encoder, BertEncoder):
        raise TypeError(_TYPE_ERROR + f" received {type(model).__name__}.")
    common = {"config": encoder.config, "encoder": encoder, "lower_case": lower_case,
              "preprocessor": preprocessor}
    if isinstance(model, BertPretrainer):
        items = dict(model.checkpoint_items())
        items.pop("encoder")
        return _Export(head="pretrainer", heads=items, **common)
    for model_class, head in ((BertTokenClassifier, "token_classifier"),
                              (BertClassifier, "classifier"),
                              (BertSpanLabeler, "span_labeler"),
                              (BertMultipleChoice, "multiple_choice")):
        if isinstance(model, model_class):
            names = getattr(model, "label_names", None)
            problem_type = getattr(model, "problem_type", None)
            return _Export(head=head, task_head=model.head, label_names=names,
                           problem_type=problem_type if head == "classifier" else None,
                           **common)
    return _Export(head="encoder", **common)  # SentenceEncoder and other encoder holders


_TYPE_ERROR = ("export_huggingface_checkpoint takes a model directory, a BertEncoder or a "
               "BertPretrainer, or a bert_tf task model (BertClassifier, BertTokenClassifier, "
               "BertSpanLabeler, BertMultipleChoice, or a keras_tasks model holding one);")


def _tensors(export):
    """The folder's tensors, by their PyTorch names."""
    config, architecture = export.config, export.architecture
    rules = weight_map.expand(huggingface.TABLE, config.num_hidden_layers, list(export.heads))
    weights = weight_map.model_weights(export.encoder, *export.heads.values())
    if architecture in NO_POOLER:
        rules = [rule for rule in rules if not rule.target.startswith("pooler/")]
        weights = {path: w for path, w in weights.items() if not path.startswith("pooler/")}
    if export.task_head is not None:
        module = HEAD_MODULES[export.head]
        path = export.task_head.kernel.path.rsplit("/", 1)[0]
        rules += [Rule(f"{path}/kernel", f"{module}.weight", True),
                  Rule(f"{path}/bias", f"{module}.bias", False)]
        weights.update(weight_map.model_weights(export.task_head))
    tensors = weight_map.export_to(rules, weights)
    if architecture == "BertModel":
        return tensors
    return {name if name.startswith(("cls.",) + tuple(HEAD_MODULES.values()))
            else huggingface.PREFIX + name: value for name, value in tensors.items()}


def _hf_config(export):
    values = huggingface._hf_config(export.config, export.heads)
    values["architectures"] = [export.architecture]
    if export.task_head is not None and export.head in ("classifier", "token_classifier"):
        units = export.task_head.units
        names = export.label_names or [f"LABEL_{i}" for i in range(units)]
        values["id2label"] = {str(i): name for i, name in enumerate(names)}
        values["label2id"] = {name: i for i, name in enumerate(names)}
        if export.head == "classifier":
            values["problem_type"] = export.problem_type or (
                "regression" if units == 1 else "single_label_classification")
    return values


@contextlib.contextmanager
def _vocab(export, vocab_file):
    if vocab_file is not None or export.preprocessor is None:
        yield vocab_file or export.vocab_file
        return
    with export.preprocessor.vocab_path() as path:
        yield path


def export_huggingface_checkpoint(model_dir_or_model, hf_dir, vocab_file=None):
    """Writes a model as a Hugging Face folder of its task's architecture (module docstring).

    Args:
      model_dir_or_model: a model directory, or a `BertEncoder`, `BertPretrainer`, bert_tf
        task model or Keras task model.
      hf_dir: destination folder, created if missing.
      vocab_file: the vocab to copy in; defaults to the model directory's `vocab.txt` or the
        task model's preprocessor's.

    Returns:
      The path of the written `model.safetensors`.
    """
    if isinstance(model_dir_or_model, (str, os.PathLike)):
        export = _from_model_dir(os.fspath(model_dir_or_model))
    elif isinstance(model_dir_or_model, keras.Model):
        export = _from_model(model_dir_or_model)
    else:
        raise TypeError(_TYPE_ERROR + f" received {type(model_dir_or_model).__name__}.")
    tensors = _tensors(export)
    tf.io.gfile.makedirs(hf_dir)
    path = os.path.join(hf_dir, huggingface.WEIGHTS_FILE)
    require_extra("safetensors.numpy", extra="hf").save_file(tensors, path,
                                                             metadata={"format": "pt"})
    with open(os.path.join(hf_dir, huggingface.CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(_hf_config(export), f, indent=2, sort_keys=True)
        f.write("\n")
    with _vocab(export, vocab_file) as vocab:
        if vocab is not None and os.path.exists(vocab):
            shutil.copyfile(vocab, os.path.join(hf_dir, huggingface.VOCAB_FILE))
    if export.lower_case is not None:
        with open(os.path.join(hf_dir, TOKENIZER_CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": export.lower_case,
                       "strip_accents": None}, f, indent=2)
            f.write("\n")
    logging.info("Wrote %s (%s, %d tensors).", path, export.architecture, len(tensors))
    return path
