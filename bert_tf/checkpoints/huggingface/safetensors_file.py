"""The PyTorch side of Hugging Face folders: `model.safetensors` (or shards) and its names.

Weights are read with `safetensors`' numpy API: no torch, and never a pickle. PyTorch
`Linear` weights are `[out, in]`, Keras `Dense` kernels `[in, out]`: those rules transpose.
Keys may carry the `bert.` prefix of `BertForPreTraining` or none (`BertModel`).

Example:
>>> source = read_safetensors("all-MiniLM-L6-v2/model.safetensors")  # doctest: +SKIP
>>> source.shapes["embeddings.word_embeddings.weight"]  # doctest: +SKIP
[30522, 384]
"""

import ml_dtypes  # noqa: F401  (TF's dependency; lets numpy read bfloat16 safetensors)

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.huggingface import shards
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.errors import CheckpointError, require_extra

WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = WEIGHTS_FILE + shards.INDEX_SUFFIX
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


def short_name(key):
    """A safetensors key without the `bert.` prefix of `BertFor*` (`BertModel` has none)."""
    return key[len(PREFIX):] if key.startswith(PREFIX) else key


def read_safetensors(path):
    """The tensors of one safetensors file as a `TensorSource`, `bert.` prefix removed."""
    shapes, keys = {}, {}
    for key, shape in _safetensors_shapes(path).items():
        name = short_name(key)
        if name in shapes:
            raise CheckpointError(f"{path}: tensor `{name}` appears twice (with and without "
                                  f"the `{PREFIX}` prefix).")
        shapes[name], keys[name] = shape, key

    def read(name):
        try:
            with _safe_open(path) as f:
                return f.get_tensor(keys[name])
        except (TypeError, ValueError) as error:
            raise CheckpointError(f"{path}: cannot read tensor `{keys[name]}` as numpy ({error}); "
                                  "save the checkpoint in float32, float16 or bfloat16.") from None

    return weight_map.TensorSource(shapes, read, where=path)


def read_sharded(index_path):
    """The tensors of every shard `model.safetensors.index.json` names, as one `TensorSource`."""
    return shards.read_shards(index_path, read_safetensors, short_name)
