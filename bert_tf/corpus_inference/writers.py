"""Result shards of `tools/predict.py`: Parquet or JSON lines, each complete or absent.

A shard is written under a hidden temporary name in the output folder and renamed when
complete, so a reader of the folder (or a failed run) never sees half a shard; a retried write
(distributed runners retry work) renames over the same name. Parquet has a column per field:
`id`, then the head's (`label`, `probabilities`, `score`, `tags` or `embedding`);
`probabilities` and `embedding` are fixed-size lists of float32. JSON lines hold one object
per result with the same keys.

Example:
>>> write_shard("out/preds", 0, 2, "jsonl", [{"id": "a.txt:1", "label": "pos"}])  # doctest: +SKIP
'out/preds/part-00000-of-00002.jsonl'
"""

import json
import os
import uuid

from bert_tf import errors, file_io

FORMATS = ("parquet", "jsonl")
SHARD_PREFIX = "part-"
_TEMPORARY = ".tmp-"
_FIXED_SIZE_FIELDS = ("probabilities", "embedding")


def shard_name(index, num_shards, output_format):
    return f"{SHARD_PREFIX}{index:05d}-of-{num_shards:05d}.{output_format}"


def write_shard(output_dir, index, num_shards, output_format, records):
    """Writes `records` (dicts, all with the same keys) as shard `index`; returns its path."""
    path = f"{output_dir}/{shard_name(index, num_shards, output_format)}"
    partial = (f"{output_dir}/.{shard_name(index, num_shards, output_format)}{_TEMPORARY}"
               f"{uuid.uuid4().hex[:8]}")
    if output_format == "parquet":
        _write_parquet(partial, records)
    else:
        with file_io.open_file(partial, "w") as f:
            for record in records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
    _rename(partial, path)
    return path


def _write_parquet(path, records):
    pyarrow = errors.require_extra("pyarrow", extra="beam")
    parquet = errors.require_extra("pyarrow.parquet", extra="beam")
    fields = []
    for name in records[0]:
        if name in _FIXED_SIZE_FIELDS:
            fields.append(pyarrow.field(
                name, pyarrow.list_(pyarrow.float32(), len(records[0][name]))))
        else:
            fields.append(pyarrow.field(name, pyarrow.array([r[name] for r in records]).type))
    table = pyarrow.Table.from_pylist(records, schema=pyarrow.schema(fields))
    with file_io.open_file(path, "wb") as f:
        parquet.write_table(table, f)


def _rename(source, target):
    if "://" in target:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel  (remote paths only)
        tf.io.gfile.rename(source, target, overwrite=True)
    else:
        os.replace(source, target)


def shards(output_dir):
    """The complete shards in `output_dir`, sorted."""
    return sorted(f"{output_dir}/{name}" for name in file_io.listdir(output_dir)
                  if name.startswith(SHARD_PREFIX))


def remove_partial(output_dir, shards_too=False):
    """Removes what a run left half written in `output_dir` (and its shards, `shards_too`)."""
    for name in file_io.listdir(output_dir):
        if (name.startswith(".") and _TEMPORARY in name) or (shards_too
                                                             and name.startswith(SHARD_PREFIX)):
            _remove(f"{output_dir}/{name}")


def remove_empty_folder(path):
    if "://" in path:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel  (remote paths only)
        tf.io.gfile.rmtree(path)
    else:
        os.rmdir(path)


def _remove(path):
    if "://" in path:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel  (remote paths only)
        tf.io.gfile.remove(path)
    else:
        os.remove(path)


def write_counts(counts, path):
    """Writes the run's summed counts (a dict) as JSON; the launcher reads them back."""
    with file_io.open_file(path, "w") as f:
        json.dump(counts, f, sort_keys=True)


def read_counts(path):
    """The counts `write_counts` wrote, or None if the runner never ran that step."""
    if not file_io.exists(path):
        return None
    with file_io.open_file(path) as f:
        return json.load(f)
