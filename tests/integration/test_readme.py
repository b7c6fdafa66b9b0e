"""The README's quickstart and docs/fine_tuning.md's raw-string example run, on real MiniLM.

The examples are the files next to this test; test_readme_pages.py checks that the pages show
them verbatim.
"""

import os
import pathlib
import runpy

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent


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

    import tensorflow as tf

    from bert_tf.export.restored_model import restore_model
    from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

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
    # The model directory is what run_* and tools/ read: restore_model (their loader) gives the
    # same logits. (Exporting a model directory with the tool is tests/tools/ and tests/export/.)
    restored = restore_model("clf", "classifier")
    preprocessor = BertPreprocessor(restored.vocab_file, restored.lower_case,
                                    seq_length=namespace["classifier"].preprocessor.seq_length)
    again = restored.model(preprocessor(tf.constant(["What a great film!", "Dull."])),
                           training=False)
    np.testing.assert_allclose(again.numpy(), logits, atol=1e-5, rtol=0)
