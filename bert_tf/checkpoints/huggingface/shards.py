"""Sharded Hugging Face weights: an index naming the shard file of every weight.

transformers' `save_pretrained(max_shard_size=...)` writes `model.safetensors.index.json`
(PyTorch) or, in transformers 4, `tf_model.h5.index.json` (`TFBertFor*`), both
`{"metadata": {"total_size": ...}, "weight_map": {weight name: shard file}}`, beside the shards
(`model-00001-of-00003.safetensors`, `tf_model-00001-of-00002.h5`). Both read the same way
here; only reading one shard file differs, so the format passes its one-file reader:
every shard the index names must exist, no tensor may be in two shards, and every weight the
index lists must be in the shard it names (a shard from another save is refused, not mixed in).

Example:
>>> source = read_shards("bert-tf/tf_model.h5.index.json", h5_file.read_shard,
...                      h5_file.short_name)  # doctest: +SKIP
>>> source.where  # doctest: +SKIP
'bert-tf/tf_model.h5.index.json'
"""

import os

from bert_tf.checkpoints import weight_map
from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object

INDEX_SUFFIX = ".index.json"


def read_index(index_path):
    """`{weight name: shard path}` of an index, every shard it names checked to exist.

    Raises:
      CheckpointError: not JSON, no `weight_map` object of names to file names, or a shard
        missing from the folder (which one is said).
    """
    folder = os.path.dirname(index_path)
    names = read_json_object(index_path).get("weight_map")
    if not isinstance(names, dict) or not names or not all(
            isinstance(shard, str) for shard in names.values()):
        raise CheckpointError(f"{index_path}: not a sharded-weights index: no `weight_map` "
                              "object of weight name to shard file.")
    for shard in sorted(set(names.values())):
        if not os.path.isfile(os.path.join(folder, shard)):
            raise CheckpointError(f"{index_path} names shard {shard!r}, which is not in "
                                  f"{folder}; download the missing shard.")
    return {name: os.path.join(folder, shard) for name, shard in names.items()}


def shard_files(index_path):
    """The shard files an index names, sorted, each once."""
    return sorted(set(read_index(index_path).values()))


def _owners(sources):
    """`{tensor name: shard path}` over every shard's `TensorSource`; a tensor in two is refused."""
    owners = {}
    for path, source in sources.items():
        for name in source.shapes:
            if name in owners:
                raise CheckpointError(f"{path}: tensor `{source.label(name)}` is also in "
                                      f"{owners[name]}; a weight belongs in one shard.")
            owners[name] = path
    return owners


def read_shards(index_path, read_file, short_name):
    """The tensors of every shard of `index_path` as one `weight_map.TensorSource`.

    Args:
      index_path: the `*.index.json` file.
      read_file: the format's reader of one shard file, `(path) -> TensorSource`.
      short_name: the name that reader gives a weight the index lists.

    Raises:
      CheckpointError: a bad index, a missing shard, a tensor in two shards, or a weight the
        index lists that is not in the shard it names; the file and the weight are named.
    """
    names = read_index(index_path)
    sources = {path: read_file(path) for path in sorted(set(names.values()))}
    owners = _owners(sources)
    for name, path in names.items():
        if owners.get(short_name(name)) != path:
            raise CheckpointError(f"{index_path} puts `{name}` in {os.path.basename(path)}, "
                                  "which does not hold it; the index and its shards are "
                                  "from different saves.")
    return weight_map.TensorSource(
        {name: sources[path].shapes[name] for name, path in owners.items()},
        lambda name: sources[owners[name]].read(name), where=index_path,
        labels={name: sources[path].label(name) for name, path in owners.items()})
