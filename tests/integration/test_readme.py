"""The README's Python examples are the files next to this test, verbatim, and they run."""

import os
import pathlib
import re
import runpy

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
README = HERE.parent.parent / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("example", ["readme_quickstart.py", "readme_fit_example.py",
                                     "readme_fit_strings.py"])
def test_readme_shows_the_tested_example_verbatim(example):
    assert (HERE / example).read_text(encoding="utf-8") in _python_blocks()


def test_quickstart_runs_and_ranks_similar_sentences_higher(tmp_path, monkeypatch, minilm_hf_dir):
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(HERE / "readme_quickstart.py"), run_name="__main__")
    similarity = namespace["embeddings"] @ namespace["embeddings"].T
    np.testing.assert_allclose(np.diag(similarity), 1.0, atol=1e-5)
    # The guitar and the music sentence are closer to each other than to the stock market.
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    assert similarity[0, 1] > similarity[1, 2] + 0.3


@pytest.mark.slow
def test_fit_on_strings_runs_and_its_outputs_are_read_back(tmp_path, monkeypatch, minilm_hf_dir):
    import json
    import subprocess
    import sys

    import tensorflow as tf

    monkeypatch.chdir(tmp_path)
    os.symlink(minilm_hf_dir, tmp_path / "all-MiniLM-L6-v2")
    namespace = runpy.run_path(str(HERE / "readme_fit_strings.py"), run_name="__main__")
    logits = namespace["logits"]
    assert logits.shape == (2, 2)
    np.testing.assert_allclose(namespace["reloaded"].predict(["What a great film!", "Dull."]),
                               logits, atol=1e-5, rtol=0)
    served = tf.saved_model.load("serving/1").signatures["serving_default"](
        text=tf.constant(["What a great film!", "Dull."]))
    np.testing.assert_allclose(served["logits"].numpy(), logits, atol=1e-5, rtol=0)
    assert json.load(open("clf/model_info.json"))["head"] == "classifier"
    # The model directory is what the tools read: export it again with the entry point.
    subprocess.run([sys.executable, str(HERE.parent.parent / "tools" / "export_saved_model.py"),
                    "--model_dir=clf", "--export_dir=tool_serving", "--head=classifier"],
                   check=True, capture_output=True)
    again = tf.saved_model.load("tool_serving/1").signatures["serving_default"](
        text=tf.constant(["What a great film!", "Dull."]))
    np.testing.assert_allclose(again["logits"].numpy(), logits, atol=1e-5, rtol=0)
