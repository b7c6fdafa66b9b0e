"""Labelled text from one folder per class (`root/<label>/*.txt`, e.g. BBC News), and a seeded
train/dev split, written as JSONL for the table task of `run_classifier`."""

import json
import os

import numpy as np

from bert_tf import file_io
from bert_tf.finetuning.table_reader import DataError


def _read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # the BBC corpus has a few latin-1 files ("£")


def read_class_folders(root):
    """`(texts, labels)` from `root/<label>/<file>`, in sorted label and file order.

    Raises:
      DataError: `root` has no sub-folders or a sub-folder has no files.
    """
    if not os.path.isdir(root):
        raise DataError(f"Not a folder: {root}")
    labels_found = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    if not labels_found:
        raise DataError(f"{root} has no class sub-folders.")
    texts, labels = [], []
    for label in labels_found:
        folder = os.path.join(root, label)
        names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
        if not names:
            raise DataError(f"Class folder {folder} has no files.")
        for name in names:
            texts.append(_read_text(os.path.join(folder, name)))
            labels.append(label)
    return texts, labels


def split_indices(count, dev_fraction=0.2, seed=0):
    """(train, dev) index arrays of a seeded permutation; dev is the last `dev_fraction`."""
    order = np.random.default_rng(seed).permutation(count)
    cut = count - int(round(dev_fraction * count))
    return order[:cut], order[cut:]


def write_jsonl_split(texts, labels, output_dir, dev_fraction=0.2, seed=0):
    """Writes train.jsonl and dev.jsonl (`{"text", "label"}` lines); returns their paths."""
    file_io.makedirs(output_dir)
    paths = []
    for name, indices in zip(("train", "dev"), split_indices(len(texts), dev_fraction, seed)):
        path = os.path.join(output_dir, f"{name}.jsonl")
        with file_io.open_file(path, "w") as f:
            for i in indices:
                f.write(json.dumps({"text": texts[i], "label": labels[i]}) + "\n")
        paths.append(path)
    return paths
