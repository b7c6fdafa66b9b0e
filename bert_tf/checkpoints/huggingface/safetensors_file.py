"""The PyTorch side of Hugging Face folders: `model.safetensors` (or shards) and its names.

Weights are read with `safetensors`' numpy API: no torch, and never a pickle. PyTorch
`Linear` weights are `[out, in]`, Keras `Dense` kernels `[in, out]`: those rules transpose.
Keys may carry the `bert.` prefix of `BertForPreTraining` or none (`BertModel`).

Example:
>>> source = read_safetensors("all-MiniLM-L6-v2")  # doctest: +SKIP
>>> source.shapes["embeddings.word_embeddings.weight"]  # doctest: +SKIP
[30522, 384]
"""

import json
import os

import ml_dtypes  # noqa: F401  (TF's dependency; lets numpy read bfloat16 safetensors)

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.errors import require_extra
from bert_tf.model_dir import CheckpointError

WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = WEIGHTS_FILE + ".index.json"
PICKLE_FILE = "pytorch_model.bin"
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


def weights_files(hf_dir):
    """The safetensors file(s) of a folder: `model.safetensors`, else the shards its index
    names.

    Raises:
      CheckpointError: a broken index, a missing shard, or only a `pytorch_model.bin` (a
        pickle, never read; how to convert it is said).
      FileNotFoundError: no weights.
    """
    single = os.path.join(hf_dir, WEIGHTS_FILE)
    if os.path.exists(single):
        return [single]
    index = os.path.join(hf_dir, INDEX_FILE)
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
    if os.path.exists(os.path.join(hf_dir, PICKLE_FILE)):
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
    for path in weights_files(hf_dir):
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
