"""The small files of a keras-hub preset: what it is, its config, task, vocab and casing.

`save_to_preset` writes Keras-serialized objects (`{"module", "class_name", "config",
"registered_name": "keras_hub>BertBackbone"}`) as JSON beside the weights:

  config.json          the backbone (`BertBackbone`: vocabulary_size, num_layers, num_heads,
                       hidden_dim, intermediate_dim, dropout, max_sequence_length,
                       num_segments)
  metadata.json        keras / keras-hub versions (its presence tells a preset)
  model.weights.h5     the backbone's weights (`weights_file`)
  task.json            a task: `BertTextClassifier` (num_classes, activation, dropout) or
                       `BertMaskedLM`, with its backbone and preprocessor configs
  task.weights.h5      the task's own weights (classifier `logits` Dense, or masked-LM head)
  preprocessor.json    the task's preprocessor (`sequence_length`)
  tokenizer.json       `BertTokenizer` (`lowercase`); its vocab in
                       assets/tokenizer/vocabulary.txt. keras-hub lower-cases without
                       stripping accents by default (its uncased BERT presets too); bert_tf
                       strips them when it lower-cases: read with a warning

keras-hub's `BertBackbone` computes the tanh GELU (our `gelu_approximate`) with LayerNorm
epsilon 1e-12; its masked-LM head the exact GELU with epsilon 1e-5. Every file is parsed with
`json`; a class keras-hub would build but bert_tf does not read is refused by name.

Example:
>>> preset = read_preset("bert_tiny_en_uncased/")  # doctest: +SKIP
>>> preset.task, preset.num_classes, preset.sequence_length  # doctest: +SKIP
('BertTextClassifier', 2, 512)
"""

import dataclasses
import os

from absl import logging

from bert_tf.configs import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object

CONFIG_FILE = "config.json"
METADATA_FILE = "metadata.json"
TASK_FILE = "task.json"
PREPROCESSOR_FILE = "preprocessor.json"
TOKENIZER_FILE = "tokenizer.json"
VOCAB_FILE = os.path.join("assets", "tokenizer", "vocabulary.txt")
SHARDED_WEIGHTS_FILE = "model.weights.json"

BACKBONE = "BertBackbone"
CLASSIFIER = "BertTextClassifier"
MASKED_LM = "BertMaskedLM"
TOKENIZER = "BertTokenizer"
PREPROCESSORS = {CLASSIFIER: "BertTextClassifierPreprocessor",
                 MASKED_LM: "BertMaskedLMPreprocessor"}
# What keras-hub's BERT layers compute, fixed by its classes.
HIDDEN_ACT = "gelu_approximate"
LAYER_NORM_EPS = 1e-12
MASKED_LM_ACT = "gelu"
MASKED_LM_LAYER_NORM_EPS = 1e-5
# keras-hub's (and keras_nlp's, its former name) prefix of `registered_name`.
PACKAGES = ("keras_hub>", "keras_nlp>")
# The tokenizer settings bert_tf's WordPiece shares; another value is refused.
_TOKENIZER_DEFAULTS = {"split": True, "suffix_indicator": "##", "oov_token": "[UNK]"}


@dataclasses.dataclass
class Preset:
    """What a preset's JSON files say (no weights read).

    Attributes:
      folder: the preset folder.
      config: the backbone's `BertConfig`; a `BertMaskedLM`'s adds its head's activation
        and epsilon (`masked_lm_hidden_act`, `masked_lm_layer_norm_eps`).
      task: `BertTextClassifier`, `BertMaskedLM`, or None (a backbone preset).
      num_classes: the classifier's output count, or None.
      dropout_rate: the classifier's dropout, or None.
      sequence_length: the preprocessor's `sequence_length`, or None without one.
      lower_case: the tokenizer's `lowercase`, or None without `tokenizer.json`.
      vocab_file: `assets/tokenizer/vocabulary.txt`, or None when absent.
    """

    folder: str
    config: BertConfig
    task: str = None
    num_classes: int = None
    dropout_rate: float = None
    sequence_length: int = None
    lower_case: bool = None
    vocab_file: str = None

    def path(self, name):
        return os.path.join(self.folder, name)

    def has(self, name):
        return os.path.isfile(self.path(name))


def _class_name(values, path):
    """`class_name` of a Keras-serialized object, checked to be keras-hub's."""
    registered = values.get("registered_name")
    if not isinstance(registered, str) or not registered.startswith(PACKAGES):
        raise CheckpointError(f"{path}: `registered_name` is {registered!r}, not a keras-hub "
                              "class (\"keras_hub>...\").")
    return registered.split(">", 1)[1]


def _object_config(values, path):
    config = values.get("config")
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: `config` must be an object.")
    return config


def _number(config, key, path, kind=int, minimum=1):
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, kind) or value < minimum:
        raise CheckpointError(f"{path}: `{key}` must be a {kind.__name__} >= {minimum}; "
                              f"got {value!r}.")
    return value


def backbone_config(values, path):
    """The `BertConfig` of a serialized `BertBackbone` (config.json, or task.json's)."""
    name = _class_name(values, path)
    if name != BACKBONE:
        raise CheckpointError(f"{path}: a keras-hub {name} preset, not BERT; bert_tf reads "
                              f"{BACKBONE} presets only.")
    config = _object_config(values, path)
    dropout = _number(config, "dropout", path, (int, float), 0)
    return BertConfig.from_dict({
        "vocab_size": _number(config, "vocabulary_size", path),
        "hidden_size": _number(config, "hidden_dim", path),
        "num_hidden_layers": _number(config, "num_layers", path),
        "num_attention_heads": _number(config, "num_heads", path),
        "intermediate_size": _number(config, "intermediate_dim", path),
        "hidden_act": HIDDEN_ACT,
        "hidden_dropout_prob": dropout,
        "attention_probs_dropout_prob": dropout,
        "max_position_embeddings": _number(config, "max_sequence_length", path),
        "type_vocab_size": _number(config, "num_segments", path),
        "layer_norm_eps": LAYER_NORM_EPS,
    }, source=path)


def _read_task(preset):
    path = preset.path(TASK_FILE)
    values = read_json_object(path)
    preset.task = _class_name(values, path)
    if preset.task not in PREPROCESSORS:
        raise CheckpointError(f"{path}: task {preset.task} is not one bert_tf reads; it reads "
                              f"{', '.join(PREPROCESSORS)} (or the backbone alone: remove "
                              f"{TASK_FILE}).")
    config = _object_config(values, path)
    backbone = config.get("backbone")
    if isinstance(backbone, dict) and backbone_config(backbone, path) != preset.config:
        raise CheckpointError(f"{path}: its backbone config differs from {CONFIG_FILE}'s.")
    if preset.task == MASKED_LM:
        preset.config = dataclasses.replace(preset.config, masked_lm_hidden_act=MASKED_LM_ACT,
                                            masked_lm_layer_norm_eps=MASKED_LM_LAYER_NORM_EPS)
    if preset.task == CLASSIFIER:
        preset.num_classes = _number(config, "num_classes", path)
        activation = config.get("activation")
        if activation not in (None, "linear"):
            raise CheckpointError(f"{path}: `activation` is {activation!r}; bert_tf's "
                                  "classifier outputs logits (activation null or linear).")
        preset.dropout_rate = _number(config, "dropout", path, (int, float), 0)


def _read_tokenizer(preset):
    path = preset.path(TOKENIZER_FILE)
    values = read_json_object(path)
    name = _class_name(values, path)
    if name != TOKENIZER:
        raise CheckpointError(f"{path}: tokenizer {name}, not {TOKENIZER}.")
    config = _object_config(values, path)
    for key, default in _TOKENIZER_DEFAULTS.items():
        if config.get(key, default) != default:
            raise CheckpointError(f"{path}: `{key}` is {config[key]!r}; bert_tf's WordPiece "
                                  f"uses {default!r}.")
    lower_case = config.get("lowercase", False)
    if not isinstance(lower_case, bool):
        raise CheckpointError(f"{path}: `lowercase` must be true or false; got {lower_case!r}.")
    if lower_case and not config.get("strip_accents", False):
        logging.warning("%s lower-cases without stripping accents (keras-hub's default); "
                        "bert_tf strips them when it lower-cases, as google-research and "
                        "Hugging Face's uncased BERT do, so ids differ only on accented "
                        "letters.", path)
    preset.lower_case = lower_case
    if preset.has(VOCAB_FILE):
        preset.vocab_file = preset.path(VOCAB_FILE)


def _read_preprocessor(preset):
    path = preset.path(PREPROCESSOR_FILE)
    values = read_json_object(path)
    _class_name(values, path)
    length = _object_config(values, path).get("sequence_length")
    if length is not None:
        preset.sequence_length = _number(_object_config(values, path), "sequence_length", path)
        if length > preset.config.max_position_embeddings:
            raise CheckpointError(
                f"{path}: `sequence_length` {length} exceeds the backbone's "
                f"max_sequence_length {preset.config.max_position_embeddings}.")


def read_preset(folder):
    """A `Preset` of `folder`'s JSON files.

    Raises:
      FileNotFoundError: no `config.json`.
      CheckpointError: a file that is not a keras-hub object, another architecture (named),
        a task or tokenizer setting bert_tf does not read, or files that disagree.
    """
    folder = os.fspath(folder)
    path = os.path.join(folder, CONFIG_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No {CONFIG_FILE} in keras-hub preset {folder}.")
    preset = Preset(folder, backbone_config(read_json_object(path), path))
    if preset.has(TASK_FILE):
        _read_task(preset)
    if preset.has(TOKENIZER_FILE):
        _read_tokenizer(preset)
    if preset.has(PREPROCESSOR_FILE):
        _read_preprocessor(preset)
    return preset
