"""keras-hub's BERT weights files (Keras 3 `*.weights.h5`) by a name-map table, with h5py.

`save_to_preset` writes the backbone's weights to `model.weights.h5` and a task's own to
`task.weights.h5` in Keras 3's layout: one group per layer, named from the model's layer list
(`layers/<class name in snake case>`, numbered `_1`, `_2`... from the second of a class) and
the layers' attributes below it, each layer's variables as datasets `vars/0`, `vars/1`... in
creation order (kernel then bias; gamma then beta). The paths are therefore fixed by
keras-hub's classes, and `TABLE` maps them to our weight paths (transformer layer 0 is
`transformer_encoder`, layer i `transformer_encoder_i`). keras-hub's attention kernels are
`[H, heads, head_size]` (query, key, value; biases `[heads, head_size]`) and `[heads,
head_size, H]` (output): read as our `[H, H]` where the split fits the config, written back
split. A task file's optimizer state (`optimizer/`) carries no model weights and is skipped.
Read with h5py (Keras's dependency), never through Keras or keras-hub; HDF5 holds no pickles.

Example:
>>> source = read_weights("preset/model.weights.h5", config)  # doctest: +SKIP
>>> source.shapes["layers/pooled_dense/vars/0"]  # doctest: +SKIP
(768, 768)
"""

import numpy as np

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.weight_map import LAYER, Rule, dense_rules, norm_rules
from bert_tf.errors import CheckpointError

MODEL_WEIGHTS_FILE = "model.weights.h5"
TASK_WEIGHTS_FILE = "task.weights.h5"
# Names of task-file tensors start with this, so one source holds both files.
TASK = "task/"
OPTIMIZER_GROUP = "optimizer/"
_BLOCK = f"layers/transformer_encoder_{LAYER}/"
_ATTENTION = _BLOCK + "_self_attention_layer/"
# A Keras 3 weights file names a layer's two weights (kernel and bias, gamma and beta) so.
_VARS = ("vars/0", "vars/1")




# Our weight path <- the h5 dataset path (task-file paths behind `TASK`).
TABLE = (
    Rule("embeddings/word_embeddings/embeddings", "layers/reversible_embedding/vars/0", False),
    Rule("embeddings/position_embeddings", "layers/position_embedding/vars/0", False),
    Rule("embeddings/token_type_embeddings/embeddings", "layers/embedding/vars/0", False),
    *norm_rules("embeddings/layer_norm", "layers/layer_normalization", *_VARS),
    *dense_rules(f"layer_{LAYER}/attention/query", _ATTENTION + "query_dense", *_VARS),
    *dense_rules(f"layer_{LAYER}/attention/key", _ATTENTION + "key_dense", *_VARS),
    *dense_rules(f"layer_{LAYER}/attention/value", _ATTENTION + "value_dense", *_VARS),
    *dense_rules(f"layer_{LAYER}/attention/output", _ATTENTION + "output_dense", *_VARS),
    *norm_rules(f"layer_{LAYER}/attention_layer_norm", _BLOCK + "_self_attention_layer_norm",
                *_VARS),
    *dense_rules(f"layer_{LAYER}/intermediate", _BLOCK + "_feedforward_intermediate_dense", *_VARS),
    *dense_rules(f"layer_{LAYER}/output", _BLOCK + "_feedforward_output_dense", *_VARS),
    *norm_rules(f"layer_{LAYER}/output_layer_norm", _BLOCK + "_feedforward_layer_norm", *_VARS),
    *dense_rules("pooler", "layers/dense", *_VARS),  # pooled_dense, the backbone's only Dense
    *dense_rules("masked_lm/transform", TASK + "layers/masked_lm_head/_intermediate_dense", *_VARS),
    *norm_rules("masked_lm/layer_norm", TASK + "layers/masked_lm_head/_intermediate_layer_norm",
                *_VARS),
    Rule("masked_lm/output_bias", TASK + "layers/masked_lm_head/vars/0", False),
)


def classifier_rules(target):
    """Rules of a BertTextClassifier's `logits` Dense (task.weights.h5) into our `target`."""
    return dense_rules(target, TASK + "layers/dense", *_VARS)


def expand(config, heads=()):
    """`TABLE` over the config's layers (transformer layer 0 has no `_0`), heads kept."""
    return [rule._replace(source=rule.source.replace("transformer_encoder_0/",
                                                     "transformer_encoder/"))
            for rule in weight_map.expand(TABLE, config.num_hidden_layers, heads)]


def split_shape(config, name):
    """`(keras-hub's shape, ours)` of attention tensor `name`, or None for other tensors."""
    heads, size, hidden = config.num_attention_heads, config.head_size, config.hidden_size
    if "_self_attention_layer/" not in name:
        return None
    if "output_dense" in name:
        return ((heads, size, hidden), (hidden, hidden)) if name.endswith("/0") else None
    if name.endswith("/0"):
        return (hidden, heads, size), (hidden, hidden)
    return (heads, size), (hidden,)


def _walk(h5py, group, prefix, path, found):
    """Adds `{name: shape}` of every dataset under `group` (hard links only) to `found`."""
    for key in group:
        name = prefix + key
        link = group.get(key, getlink=True)
        if not isinstance(link, h5py.HardLink):
            raise CheckpointError(f"{path}: `{name}` is a link; bert_tf reads only weights "
                                  "stored in the file.")
        item = group[key]
        if isinstance(item, h5py.Group):
            if name + "/" != OPTIMIZER_GROUP:  # optimizer slots are no model weights
                _walk(h5py, item, name + "/", path, found)
        elif item.dtype.kind != "f":
            raise CheckpointError(f"{path}: `{name}` holds {item.dtype}, not float numbers "
                                  "(save the preset in float32, float16 or bfloat16 cast "
                                  "to float32).")
        else:
            found[name] = item.shape


def read_weights(folder_files, config):
    """The tensors of a preset's weights files as one `weight_map.TensorSource`.

    Args:
      folder_files: `{prefix: path}`: `""` for `model.weights.h5`, `TASK` for
        `task.weights.h5` where the preset has one.
      config: the `BertConfig` of `config.json`: attention tensors split as it says read
        as our `[H, H]` / `[H]`; any other shape is left for `weight_map.translate` to
        refuse by name.

    Raises:
      CheckpointError: not an HDF5 file, a link, or a weight that is not float; file and
        dataset named.
    """
    import h5py  # Keras's dependency, imported here: only keras-hub presets need it

    shapes, files, labels = {}, {}, {}
    for prefix, path in folder_files.items():
        found = {}
        try:
            handle = h5py.File(path, "r")
        except OSError as error:
            raise CheckpointError(f"{path}: not a readable HDF5 file ({error}).") from None
        with handle as f:
            try:
                _walk(h5py, f, "", path, found)
            except (RuntimeError, KeyError, OSError) as error:  # h5py on a damaged file
                raise CheckpointError(f"{path}: a damaged or partly written HDF5 file "
                                      f"({error}); download or write it again.") from None
        for key, stored in found.items():
            name = prefix + key
            shapes[name] = tuple(stored)
            split = split_shape(config, name)
            if split is not None and tuple(stored) == split[0]:
                shapes[name] = split[1]
            files[name] = (path, key)
            labels[name] = f"{path.rsplit('/', 1)[-1]}:{key}"

    def read(name):
        path, key = files[name]
        with h5py.File(path, "r") as f:
            return np.asarray(f[key][()], dtype=np.float32).reshape(shapes[name])

    return weight_map.TensorSource(shapes, read, where=", ".join(folder_files.values()),
                                   labels=labels)


def write_weights(path, tensors, config):
    """Writes `{dataset path: our-layout array}` as a Keras 3 weights file keras-hub loads
    (attention tensors split back into keras-hub's shapes)."""
    import h5py

    with h5py.File(path, "w") as f:
        for name, value in sorted(tensors.items()):
            split = split_shape(config, name)
            f.create_dataset(name, data=value.reshape(split[0]) if split else value)
