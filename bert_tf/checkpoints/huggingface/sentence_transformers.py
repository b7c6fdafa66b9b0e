"""How a sentence-transformers folder turns token states into one embedding.

A sentence-transformers folder is a Hugging Face BERT folder plus the modules that run after
the encoder, listed in `modules.json`: `Transformer` (the encoder, `sentence_bert_config.json`
gives its `max_seq_length`), `Pooling` (`1_Pooling/config.json`: [CLS] token, masked mean or
masked max) and, optionally, `Normalize` (unit L2 norm). all-MiniLM-L6-v2 is mean + Normalize
at 256 tokens; BGE is [CLS] + Normalize at 512; others pool differently, so an embedding is
only the model's when these files are followed. Modules bert_tf cannot run (a `Dense`
projection, weighted-mean or last-token pooling) are refused by name rather than skipped.
Folders sentence-transformers 6 saves are read too: module types by their longer paths, one
`pooling_mode` name, `max_seq_length` as the tokenizer's `model_max_length`.

`write_sentence_modules` writes these files back beside a Hugging Face folder's encoder, in
the layout sentence-transformers 2 to 6 all load (the Hub's: `pooling_mode_*` switches,
`max_seq_length` in `sentence_bert_config.json`).

Example:
>>> read_sentence_pooling("all-MiniLM-L6-v2/")  # doctest: +SKIP
SentencePooling(pooling='mean', normalize=True, max_seq_length=256)
"""

import dataclasses
import json
import os

from bert_tf import file_io
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object

MODULES_FILE = "modules.json"
SENTENCE_CONFIG_FILE = "sentence_bert_config.json"
# The model's own settings (sentence-transformers 3+): bert_tf reads and writes `truncate_dim`.
MODEL_CONFIG_FILE = "config_sentence_transformers.json"
POOLING_CONFIG_FILE = "config.json"
POOLING_PATH, NORMALIZE_PATH = "1_Pooling", "2_Normalize"

_MODULE_PREFIX = "sentence_transformers.models."
# 1_Pooling/config.json switch -> bert_tf's pooling. sentence-transformers' "cls" reads the
# [CLS] token's state, not the tanh pooler: bert_tf calls that "cls_token".
_POOLING_MODES = {"pooling_mode_cls_token": "cls_token", "pooling_mode_mean_tokens": "mean",
                  "pooling_mode_max_tokens": "max"}
# sentence-transformers 6 saves one `pooling_mode` name instead of the switches.
_POOLING_NAMES = {"cls": "cls_token", "mean": "mean", "max": "max"}
# sentence-transformers 6 keeps max_seq_length as the tokenizer's `model_max_length`;
# transformers writes 1e30 for "no limit".
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
_NO_LIMIT = 10**9
_UNSUPPORTED_MODES = ("pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                      "pooling_mode_lasttoken")


@dataclasses.dataclass(frozen=True)
class SentencePooling:
    """What a sentence-transformers folder does after the encoder.

    Attributes:
      pooling: "cls_token", "mean" or "max" (the `SentenceEncoder` pooling of the same name).
      normalize: whether a `Normalize` module follows the pooling.
      max_seq_length: `sentence_bert_config.json`'s, else `tokenizer_config.json`'s
        `model_max_length`, or None when neither records one.
      truncate_dim: `config_sentence_transformers.json`'s: the embedding's first dims kept
        (a Matryoshka model's), or None for all.
    """

    pooling: str
    normalize: bool
    max_seq_length: int = None
    truncate_dim: int = None


def _read_modules(path):
    modules = file_io.read_json(path, CheckpointError)
    if not (isinstance(modules, list) and modules
            and all(isinstance(m, dict) and isinstance(m.get("type"), str) for m in modules)):
        raise CheckpointError(f"{path}: expected a list of modules, each with a \"type\".")
    return modules


def _pooling_mode(folder, module, path):
    config_path = os.path.join(_module_folder(folder, module, path), POOLING_CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise CheckpointError(f"{path}: its Pooling module has no {config_path}.")
    config = read_json_object(config_path)
    if "pooling_mode" in config:
        return _pooling_name(config["pooling_mode"], config_path)
    unsupported = [key for key in _UNSUPPORTED_MODES if config.get(key)]
    if unsupported:
        raise CheckpointError(f"{config_path}: {unsupported[0]} is not a pooling bert_tf runs "
                              f"(it runs {', '.join(sorted(_POOLING_MODES))}).")
    modes = [pooling for key, pooling in _POOLING_MODES.items() if config.get(key)]
    if len(modes) != 1:
        raise CheckpointError(f"{config_path}: exactly one of {', '.join(_POOLING_MODES)} must "
                              f"be true (found {len(modes)}); bert_tf does not concatenate "
                              "poolings.")
    return modes[0]


def _pooling_name(mode, config_path):
    """bert_tf's pooling for sentence-transformers 6's `pooling_mode` (a name, or a list of
    one)."""
    modes = [mode] if isinstance(mode, str) else mode
    if not (isinstance(modes, list) and len(modes) == 1 and modes[0] in _POOLING_NAMES):
        raise CheckpointError(f"{config_path}: pooling_mode {mode!r} is not a pooling bert_tf "
                              f"runs (it runs one of {', '.join(_POOLING_NAMES)}; it does not "
                              "concatenate poolings).")
    return _POOLING_NAMES[modes[0]]


def _module_kind(module, path):
    """`Transformer`, `Pooling`, `Normalize`, ... of a module's `type`: the Hub's
    `sentence_transformers.models.X` or sentence-transformers 6's longer module paths."""
    kind = module["type"]
    if kind.startswith(_MODULE_PREFIX):
        return kind.removeprefix(_MODULE_PREFIX)
    if kind.startswith("sentence_transformers."):
        return kind.rsplit(".", 1)[-1]
    raise CheckpointError(f"{path}: module {kind!r} is not one of sentence-transformers'.")


def _module_folder(folder, module, path):
    """The folder of a module, which must lie inside `folder` (a downloaded folder may lie)."""
    relative = str(module.get("path", ""))
    inside, root = os.path.realpath(os.path.join(folder, relative)), os.path.realpath(folder)
    if os.path.commonpath([inside, root]) != root:
        raise CheckpointError(f"{path}: module path {relative!r} leads out of the folder; "
                              "refused (a module's files must lie inside it).")
    return inside


def _max_seq_length(folder):
    """`sentence_bert_config.json`'s `max_seq_length`, else (sentence-transformers 6) the
    tokenizer's `model_max_length`, else None."""
    path = os.path.join(folder, SENTENCE_CONFIG_FILE)
    value = read_json_object(path).get("max_seq_length") if os.path.isfile(path) else None
    tokenizer_path = os.path.join(folder, TOKENIZER_CONFIG_FILE)
    if value is None and os.path.isfile(tokenizer_path):
        path, value = tokenizer_path, read_json_object(tokenizer_path).get("model_max_length")
        if isinstance(value, (int, float)) and value >= _NO_LIMIT:
            return None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 3:
        raise CheckpointError(f"{path}: max_seq_length must be an integer >= 3; "
                              f"received {value!r}.")
    return value


def _truncate_dim(folder):
    """`config_sentence_transformers.json`'s `truncate_dim`, else None."""
    path = os.path.join(folder, MODEL_CONFIG_FILE)
    value = read_json_object(path).get("truncate_dim") if os.path.isfile(path) else None
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or value < 1):
        raise CheckpointError(f"{path}: truncate_dim must be an integer >= 1 or null; "
                              f"received {value!r}.")
    return value


def read_sentence_pooling(folder):
    """The `SentencePooling` of a sentence-transformers folder, or None for another folder.

    Raises:
      CheckpointError: a damaged `modules.json` or pooling config, or a module bert_tf
        cannot run (named, with its file).
    """
    path = os.path.join(folder, MODULES_FILE)
    if not os.path.isfile(path):
        return None
    pooling, normalize = None, False
    for module in _read_modules(path):
        kind = _module_kind(module, path)
        if kind == "Transformer":
            continue
        if kind == "Pooling" and pooling is None and not normalize:
            pooling = _pooling_mode(folder, module, path)
        elif kind == "Normalize" and pooling is not None and not normalize:
            normalize = True
        else:
            raise CheckpointError(f"{path}: module {module['type']!r} is not one bert_tf runs "
                                  "after the encoder (it runs Transformer, Pooling, then "
                                  "optionally Normalize).")
    if pooling is None:
        raise CheckpointError(f"{path}: no Pooling module after the Transformer.")
    return SentencePooling(pooling, normalize, _max_seq_length(folder), _truncate_dim(folder))


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def write_sentence_modules(folder, sentence_pooling, hidden_size):
    """Writes the sentence-transformers files of `sentence_pooling` into `folder`.

    `modules.json` (Transformer, Pooling, and Normalize when `sentence_pooling.normalize`),
    `1_Pooling/config.json`, `2_Normalize/` and `sentence_bert_config.json` (its
    `max_seq_length`; `do_lower_case` false: the tokenizer files hold the casing), and
    `config_sentence_transformers.json` with the `truncate_dim` when there is one. The
    encoder's own files (`config.json`, weights, tokenizer) are the caller's.

    Raises:
      CheckpointError: a pooling sentence-transformers does not compute (the tanh pooler,
        "cls"), or no `max_seq_length`.
    """
    modes = {pooling: key for key, pooling in _POOLING_MODES.items()}
    if sentence_pooling.pooling not in modes:
        raise CheckpointError(
            f"pooling {sentence_pooling.pooling!r} is not one sentence-transformers computes "
            f"(it pools {', '.join(sorted(modes))}; \"cls_token\" is its [CLS] state).")
    if sentence_pooling.max_seq_length is None:
        raise CheckpointError("A sentence-transformers folder records its max_seq_length; "
                              "pass one.")
    modules = [("Transformer", "")] + [("Pooling", POOLING_PATH)] + (
        [("Normalize", NORMALIZE_PATH)] if sentence_pooling.normalize else [])
    _write_json(os.path.join(folder, MODULES_FILE), [
        {"idx": i, "name": str(i), "path": path, "type": _MODULE_PREFIX + kind}
        for i, (kind, path) in enumerate(modules)])
    os.makedirs(os.path.join(folder, POOLING_PATH), exist_ok=True)
    pooling_config = {"word_embedding_dimension": hidden_size}
    pooling_config.update({key: pooling == sentence_pooling.pooling
                           for key, pooling in _POOLING_MODES.items()})
    pooling_config["pooling_mode_mean_sqrt_len_tokens"] = False  # the Hub's four switches
    _write_json(os.path.join(folder, POOLING_PATH, POOLING_CONFIG_FILE), pooling_config)
    if sentence_pooling.normalize:
        os.makedirs(os.path.join(folder, NORMALIZE_PATH), exist_ok=True)
    _write_json(os.path.join(folder, SENTENCE_CONFIG_FILE),
                {"max_seq_length": sentence_pooling.max_seq_length, "do_lower_case": False})
    if sentence_pooling.truncate_dim is not None:
        _write_json(os.path.join(folder, MODEL_CONFIG_FILE),
                    {"truncate_dim": sentence_pooling.truncate_dim})
