"""Hugging Face BERT folders (`config.json` + `model.safetensors`) to and from our models.

Weights are read with `safetensors`' numpy API: no torch, and never a pickle. PyTorch
`Linear` weights are `[out, in]`, Keras `Dense` kernels `[in, out]`: those rules transpose.
Keys may carry the `bert.` prefix of `BertForPreTraining` or none (`BertModel`).

Example:
>>> encoder = load_huggingface_encoder("all-MiniLM-L6-v2")  # doctest: +SKIP
"""

import json
import os

import ml_dtypes  # noqa: F401  (TF's dependency; lets numpy read bfloat16 safetensors)
import numpy as np
from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.configs import BertConfig
from bert_tf.errors import require_extra
from bert_tf.model_dir import CheckpointError

CONFIG_FILE = "config.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.txt"
PREFIX = "bert."


# Our weight path <- Hugging Face key (without the `bert.` prefix).
TABLE = weight_map.bert_rules(weight_map.Spelling(
    sep=".", embeddings="embeddings", block=f"encoder.layer.{LAYER}", pooler="pooler.dense",
    transform="cls.predictions.transform", embedding_leaf=".weight", kernel="weight",
    bias="bias", gamma="weight", beta="bias", transposed_kernel=True)) + (
    Rule("masked_lm/output_bias", "cls.predictions.bias", False),
    Rule("next_sentence/kernel", "cls.seq_relationship.weight", True),
    Rule("next_sentence/bias", "cls.seq_relationship.bias", False),
)

# A buffer of position indices that older transformers versions saved; no weights.
IGNORED = ("embeddings.position_ids",)
# Copies of tied weights that some versions also save; they must equal the original.
TIED = {"cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias"}

# Our `hidden_act` names that Hugging Face spells differently.
_HF_ACTIVATIONS = {"gelu_approximate": "gelu_new"}


def _weights_files(hf_dir):
    single = os.path.join(hf_dir, WEIGHTS_FILE)
    if os.path.exists(single):
        return [single]
    index = single + ".index.json"
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            try:
                shards = sorted(set(json.load(f)["weight_map"].values()))
            except (json.JSONDecodeError, KeyError, AttributeError) as error:
                raise CheckpointError(f"{index}: not a safetensors index with a `weight_map` "
                                 f"({error!r}).") from None
        for shard in shards:
            if not isinstance(shard, str) or not os.path.isfile(os.path.join(hf_dir, shard)):
                raise CheckpointError(f"{index} names shard {shard!r}, which is not in "
                                      f"{hf_dir}; download the missing shard.")
        return [os.path.join(hf_dir, shard) for shard in shards]
    if os.path.exists(os.path.join(hf_dir, "pytorch_model.bin")):
        raise CheckpointError(
            f"{hf_dir} holds only pytorch_model.bin, a Python pickle, which bert_tf never "
            "unpickles (loading one can run arbitrary code). Convert it to safetensors first "
            "where you trust the file, e.g. with transformers: "
            "`BertModel.from_pretrained(dir).save_pretrained(dir, safe_serialization=True)`.")
    raise FileNotFoundError(f"No {WEIGHTS_FILE} in Hugging Face folder {hf_dir}.")


def _safe_open(path):
    # safetensors is the `hf` extra: the main job (pretraining) never reads HF folders.
    return require_extra("safetensors", extra="hf").safe_open(path, framework="np")


def _safetensors_shapes(path):
    safetensors = require_extra("safetensors", extra="hf")
    try:
        with _safe_open(path) as f:
            return {key: f.get_slice(key).get_shape() for key in f.keys()}
    except (safetensors.SafetensorError, OSError) as error:
        raise CheckpointError(f"{path}: not a readable safetensors file ({error}).") from None


def read_safetensors(hf_dir):
    """The tensors of a Hugging Face folder as a `TensorSource`, `bert.` prefix removed."""
    shapes, files = {}, {}
    for path in _weights_files(hf_dir):
        for key, shape in _safetensors_shapes(path).items():
            name = key[len(PREFIX):] if key.startswith(PREFIX) else key
            if name in shapes:
                raise CheckpointError(f"{path}: tensor `{name}` appears twice (with and without "
                                 f"the `{PREFIX}` prefix, or in two shards).")
            shapes[name] = shape
            files[name] = (path, key)

    def read(name):
        path, key = files[name]
        try:
            with _safe_open(path) as f:
                return f.get_tensor(key)
        except (TypeError, ValueError) as error:
            raise CheckpointError(f"{path}: cannot read tensor `{key}` as numpy ({error}); "
                             "save the checkpoint in float32, float16 or bfloat16.") from None

    return weight_map.TensorSource(shapes, read, where=hf_dir)


def _check_tied(source):
    for copy, original in TIED.items():
        if copy in source.shapes and original in source.shapes:
            if not np.array_equal(source.read(copy), source.read(original)):
                raise CheckpointError(f"Checkpoint {source.where}: `{copy}` differs from "
                                 f"`{original}`; bert_tf ties them, so it cannot hold this model.")


def load_huggingface_models(hf_dir):
    """Builds and fills our encoder and heads from a Hugging Face folder.

    Returns:
      `(config, encoder, heads)`, heads keyed `masked_lm` / `next_sentence` (those it holds).
    """
    source = read_safetensors(hf_dir)
    config = BertConfig.from_json_file(os.path.join(hf_dir, CONFIG_FILE))
    heads = [group for group, key in (("masked_lm", "cls.predictions.bias"),
                                      ("next_sentence", "cls.seq_relationship.weight"))
             if key in source.shapes]
    _check_tied(source)
    encoder, head_layers = weight_map.build_models(config, heads)
    rules = weight_map.expand(TABLE, config.num_hidden_layers, heads)
    weights = weight_map.model_weights(encoder, *head_layers.values())
    weight_map.assign_from(source, rules, weights, ignored=IGNORED + tuple(TIED))
    logging.info("Read %d tensors from %s (heads: %s).", len(rules), hf_dir, heads or "none")
    return config, encoder, head_layers


def load_huggingface_encoder(hf_dir):
    """Reads a Hugging Face BERT folder into a `BertEncoder` (pretraining heads dropped).

    Raises:
      FileNotFoundError: no `config.json` or `model.safetensors`.
      CheckpointError: a pickle-only folder, or tensors that do not fit the config (named).
    """
    return load_huggingface_models(hf_dir)[1]


def _hf_config(config, heads):
    values = config.to_dict()
    values["hidden_act"] = _HF_ACTIVATIONS.get(config.hidden_act, config.hidden_act)
    values.update(model_type="bert", position_embedding_type="absolute", pad_token_id=0,
                  tie_word_embeddings=True,
                  architectures=["BertForPreTraining" if heads else "BertModel"])
    return values
