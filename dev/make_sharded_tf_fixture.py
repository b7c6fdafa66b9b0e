"""Dev-only: re-writes a committed `tf_model.h5` fixture as transformers 4 shards it.

transformers 4 with TensorFlow cannot be installed beside bert_tf, so this script re-writes
`tests/testdata/hf_tasks/pretraining_tf/tf_model.h5` (saved by transformers 4.57.6's
`TFBertForPreTraining.save_pretrained`, dev/make_hf_task_fixtures.py) into
`pretraining_sharded_tf/`, as `save_pretrained(d, max_shard_size=3700)` of the same model
writes it: 3 shards, layer 0's query kernel in the first, its bias in the second. Needs only numpy
and h5py (bert_tf's venv):

  python dev/make_sharded_tf_fixture.py --output_dir=tests/testdata

The layout follows transformers 4.57.6, `src/transformers/modeling_tf_utils.py`:
- `TFPreTrainedModel.save_pretrained` shards `self.weights` (tf-keras dedups a tied variable,
  so the MLM decoder's copy of the word embeddings is saved once) with
  `tf_shard_checkpoint(self.weights, max_shard_size, weights_name="tf_model.h5")`.
- `tf_shard_checkpoint`: weights in `model.weights` order (for TFBert*, the order of the
  unsharded file's layers and their `weight_names`), a weight's size `numpy().size *
  dtype.size`; a weight that would take the shard over `max_shard_size` (an int is bytes,
  `utils.hub.convert_file_size_to_int`) starts the next shard, so one layer's kernel and bias
  can land in two shards (asserted below). Shard `i` of `n` is
  `tf_model-{i:05d}-of-{n:05d}.h5`; the index is `{"metadata": {"total_size": bytes},
  "weight_map": {weight.name: shard file}}` with the full weight names
  (`tf_bert_for_pre_training/bert/...:0`).
- `save_pretrained` writes the index to `tf_model.h5.index.json` as
  `json.dumps(index, indent=2, sort_keys=True) + "\\n"`, then each shard with
  `h5py.File(path, mode="w")`: its weights sorted by name, each a dataset (its shape and
  dtype, then its values) at the weight's name less its first `/` part (the model's name;
  kept whole for a name holding "model." or of one part), those dataset names, utf-8
  encoded, in the root attribute `layer_names` (`save_attributes_to_hdf5_group`; one
  attribute below its 64 KB chunking limit).
- `load_tf_sharded_weights` / `load_tf_shard` read it back the same way: `layer_names`,
  then `file[name]` per weight.
config.json, vocab.txt and tokenizer_config.json are copied unchanged.
"""

import argparse
import json
import os
import shutil

import h5py
import numpy as np

SOURCE = "pretraining_tf"
TARGET = "pretraining_sharded_tf"
MAX_SHARD_SIZE = 3700  # bytes: the embeddings and layer 0's query kernel fill the first shard
COPIED = ("config.json", "vocab.txt", "tokenizer_config.json")

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata", help="Where hf_tasks/ is.")


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def model_weights(path):
    """`[(weight name, value)]` of a tf-keras `tf_model.h5`, in `model.weights` order, each
    variable once (a tied one is listed under two layers, by one name)."""
    weights = {}
    with h5py.File(path, "r") as f:
        for layer in map(_text, f.attrs["layer_names"]):
            for name in map(_text, f[layer].attrs["weight_names"]):
                weights.setdefault(name, np.asarray(f[layer][name]))
    return list(weights.items())


def shard(weights, max_shard_size):
    """transformers' `tf_shard_checkpoint`: `(shards {file: [(name, value)]}, index)`."""
    blocks, block, block_size, total_size = [], [], 0, 0
    for name, value in weights:
        size = value.size * value.dtype.itemsize
        if block_size + size > max_shard_size:
            blocks.append(block)
            block, block_size = [], 0
        block.append((name, value))
        block_size += size
        total_size += size
    blocks.append(block)
    files = {f"tf_model-{i + 1:05d}-of-{len(blocks):05d}.h5": b for i, b in enumerate(blocks)}
    index = {"metadata": {"total_size": total_size},
             "weight_map": {name: file for file, b in files.items() for name, _ in b}}
    return files, index


def dataset_name(weight_name):
    """The dataset of a weight in its shard: the name less the model's name."""
    if "model." in weight_name or len(weight_name.split("/")) == 1:
        return weight_name
    return "/".join(weight_name.split("/")[1:])


def write_shard(path, weights):
    """One shard as `save_pretrained` writes it (datasets by name, root `layer_names`)."""
    with h5py.File(path, mode="w") as f:
        layers = []
        for name, value in sorted(weights, key=lambda item: item[0]):
            dataset = f.create_dataset(dataset_name(name), value.shape, dtype=value.dtype)
            dataset[:] = value
            layers.append(dataset_name(name).encode("utf8"))
        f.attrs["layer_names"] = layers


def split_layers(index):
    """Keras layers (a weight name less its last part) whose weights are in two shards."""
    shards_of = {}
    for name, file in index["weight_map"].items():
        shards_of.setdefault(name.rsplit("/", 1)[0], set()).add(file)
    return sorted(layer for layer, files in shards_of.items() if len(files) > 1)


def main():
    args = _parser.parse_args()
    source = os.path.join(args.output_dir, "hf_tasks", SOURCE)
    target = os.path.join(args.output_dir, "hf_tasks", TARGET)
    files, index = shard(model_weights(os.path.join(source, "tf_model.h5")), MAX_SHARD_SIZE)
    assert len(files) >= 2 and split_layers(index), (len(files), split_layers(index))
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    with open(os.path.join(target, "tf_model.h5.index.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    for file, weights in files.items():
        write_shard(os.path.join(target, file), weights)
    for name in COPIED:
        shutil.copy(os.path.join(source, name), target)
    print(f"{target}: {len(files)} shards, layers split across shards: {split_layers(index)}")


if __name__ == "__main__":
    main()
