"""Hugging Face TensorFlow folders: the `tf_model.h5` that `TFBertFor*.save_pretrained` writes.

The file is tf-keras's HDF5 weights format: the root's `layer_names` attribute lists the
model's top-level layers (`bert`, `mlm___cls`, `nsp___cls`, `classifier`, `qa_outputs`), each
layer group's `weight_names` attribute its weights, named from the model down, e.g.
`tf_bert_for_sequence_classification/bert/encoder/layer_._0/attention/self/query/kernel:0`.
Read with h5py (Keras's own dependency), never through tf-keras or transformers; only numeric
datasets are read, and HDF5 holds no pickles. Names lose the model's name (the first part,
which Keras numbers `_1`, `_2`... in a busy session), `:0` and the `bert/` stem, as
transformers' own loader drops them; kernels are `[in, out]` like ours, so nothing transposes.

Sharded (transformers 4's `save_pretrained(max_shard_size=...)`): `tf_model.h5.index.json`
maps each weight's full name to its shard, `tf_model-00001-of-0000N.h5`. A shard is not
tf-keras's layout: each weight is a dataset at its name without the model's name
(`bert/encoder/layer_._0/attention/self/query/kernel:0`), all listed in the root's
`layer_names` attribute; a tied weight is saved once. `read_sharded` reads them through
`shards.read_shards`, as sharded safetensors are read.

Example:
>>> source = read_h5("bert-tf/tf_model.h5")  # doctest: +SKIP
>>> source.shapes["encoder/layer_._0/attention/self/query/kernel"]  # doctest: +SKIP
(768, 768)
"""

import numpy as np

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.huggingface import shards
from bert_tf.checkpoints.weight_map import LAYER, Rule
from bert_tf.errors import CheckpointError

WEIGHTS_FILE = "tf_model.h5"
INDEX_FILE = WEIGHTS_FILE + shards.INDEX_SUFFIX
STEM = "bert/"

# Our weight path <- the TF name (model name, `:0` and `bert/` dropped).
TABLE = tuple(
    # TFBertEmbeddings names the word table `weight`, the other two `embeddings`.
    Rule(rule.target, "embeddings/word_embeddings/weight", False)
    if rule.target == "embeddings/word_embeddings/embeddings" else rule
    for rule in weight_map.bert_rules(weight_map.Spelling(
        sep="/", embeddings="embeddings", block=f"encoder/layer_._{LAYER}",
        pooler="pooler/dense", transform="mlm___cls/predictions/transform",
        embedding_leaf="/embeddings", kernel="kernel", bias="bias", gamma="gamma",
        beta="beta", transposed_kernel=False))) + (
    Rule("masked_lm/output_bias", "mlm___cls/predictions/bias", False),
    Rule("next_sentence/kernel", "nsp___cls/seq_relationship/kernel", False),
    Rule("next_sentence/bias", "nsp___cls/seq_relationship/bias", False),
)
# The TF names of what `architectures` looks for (PyTorch's names on the left).
NAMES = {
    "pooler.dense.weight": "pooler/dense/kernel",
    "cls.predictions.bias": "mlm___cls/predictions/bias",
    "cls.seq_relationship.weight": "nsp___cls/seq_relationship/kernel",
}


def head_rules(target, name):
    """Rules of a task head Dense (`classifier`, `qa_outputs`) into our layer `target`."""
    return (Rule(f"{target}/kernel", f"{name}/kernel", False),
            Rule(f"{target}/bias", f"{name}/bias", False))


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _stem_dropped(name):
    """`bert/encoder/.../kernel:0` -> `encoder/.../kernel`."""
    name = name[:-2] if name.endswith(":0") else name
    return name[len(STEM):] if name.startswith(STEM) else name


def short_name(weight_name):
    """`tf_bert_for_x/bert/encoder/.../kernel:0` -> `encoder/.../kernel` (model name dropped)."""
    return _stem_dropped(weight_name.split("/", 1)[1] if "/" in weight_name else weight_name)


def _dataset(h5py, group, weight_name, path):
    """The float dataset `weight_name` of `group`, refused unless stored in this file."""
    link = group.get(weight_name, getlink=True)
    dataset = group.get(weight_name) if isinstance(link, h5py.HardLink) else None
    if not isinstance(dataset, h5py.Dataset) or dataset.dtype.kind != "f":
        raise CheckpointError(f"{path}: weight `{weight_name}` is not a float array stored in "
                              "the file (links to other files are not followed).")
    return dataset


def _open(h5py, path):
    """`path` opened for reading; anything but HDF5 is refused in one line."""
    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise CheckpointError(f"{path}: not a readable HDF5 file ({error}).") from None


def read_h5(path):
    """The weights of a `tf_model.h5` as a `weight_map.TensorSource` (names shortened).

    Shapes come from the file's metadata; values are read only when asked for, after the
    caller checked the shapes. A weight listed under two layers (TFBertForMaskedLM lists the
    embeddings again under `mlm___cls`, whose decoder shares them) is one tensor, whose copies
    must agree.

    Raises:
      CheckpointError: not an HDF5 file, not Keras's weights layout, a weight that is not a
        float array in the file, or two differing copies of one weight; file and name given.
    """
    import h5py  # Keras's dependency, imported here: only TF folders need it

    shapes, copies = {}, {}
    with _open(h5py, path) as f:
        if "layer_names" not in f.attrs and ("vars" in f or "layers" in f):
            raise CheckpointError(
                f"{path}: a Keras 3 weights file (`model.save_weights(...weights.h5)`), not "
                "the tf_model.h5 that transformers' TFBert*.save_pretrained writes; load it "
                "into the Keras model that saved it (`model.load_weights`).")
        if "layer_names" not in f.attrs:
            raise CheckpointError(
                f"{path}: no `layer_names` attribute, so not the Keras weights file that "
                "transformers' TFBert*.save_pretrained writes.")
        layer_names = [_text(layer) for layer in f.attrs["layer_names"]]
        if "bert" not in layer_names:  # every TFBert* model's main layer
            raise CheckpointError(
                f"{path}: holds layers {layer_names[:6]}, no `bert`: a transformers TF model of "
                "another architecture (RoBERTa, DistilBERT...), not TFBert*; bert_tf reads BERT.")
        for layer in layer_names:
            group = f.get(layer)
            if not isinstance(group, h5py.Group):
                raise CheckpointError(f"{path}: layer `{layer}` of `layer_names` has no group.")
            for weight_name in group.attrs.get("weight_names", []):
                weight_name = _text(weight_name)
                shape = _dataset(h5py, group, weight_name, path).shape
                name = short_name(weight_name)
                if name in shapes and shapes[name] != shape:
                    raise CheckpointError(
                        f"{path}: weight `{weight_name}` has shape {list(shape)}, its other "
                        f"copy `{copies[name][0][1]}` {list(shapes[name])}.")
                shapes.setdefault(name, shape)
                copies.setdefault(name, []).append((layer, weight_name))

    def read(name):
        with h5py.File(path, "r") as f:
            (layer, first), *others = copies[name]
            value = np.asarray(_dataset(h5py, f[layer], first, path)[()])
            for layer, weight_name in others:
                if not np.array_equal(value, _dataset(h5py, f[layer], weight_name, path)[()]):
                    raise CheckpointError(f"{path}: weight `{weight_name}` differs from "
                                          f"`{first}`, another copy of it.")
        return value

    labels = {name: entries[0][1] for name, entries in copies.items()}
    return weight_map.TensorSource(shapes, read, where=path, labels=labels)


def read_shard(path):
    """The weights of one `tf_model-0000i-of-0000N.h5` shard as a `TensorSource` (names
    shortened, labelled with their dataset names).

    Raises:
      CheckpointError: not HDF5, no `layer_names` attribute, a listed weight that is not a
        float array stored in the shard, or two listed weights with one short name.
    """
    import h5py

    shapes, datasets = {}, {}
    with _open(h5py, path) as f:
        if "layer_names" not in f.attrs:
            raise CheckpointError(f"{path}: no `layer_names` attribute, so not a shard that "
                                  "transformers' TFBert*.save_pretrained writes.")
        for dataset in map(_text, f.attrs["layer_names"]):
            name = _stem_dropped(dataset)
            if name in shapes:
                raise CheckpointError(f"{path}: `{dataset}` and `{datasets[name]}` both "
                                      f"name weight `{name}`.")
            shapes[name], datasets[name] = _dataset(h5py, f, dataset, path).shape, dataset

    def read(name):
        with h5py.File(path, "r") as f:
            return np.asarray(_dataset(h5py, f, datasets[name], path)[()])

    return weight_map.TensorSource(shapes, read, where=path, labels=datasets)


def read_sharded(index_path):
    """The weights of every shard `tf_model.h5.index.json` names, as one `TensorSource`."""
    return shards.read_shards(index_path, read_shard, short_name)
