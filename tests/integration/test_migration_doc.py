"""docs/migrating_from_transformers_tf.md: its bert_tf blocks run, verbatim and in order.

The transformers blocks are fenced `py` (shown, not run: transformers is not a test
dependency); the bert_tf ones `python`, run here on a tiny BertForSequenceClassification
folder, as tests/integration/test_readme.py runs the README's examples.
"""

import contextlib
import io
import os
import pathlib
import re
import shutil

import numpy as np
import pytest

from tests.checkpoints.conftest import folder_of

ROOT = pathlib.Path(__file__).parent.parent.parent
PAGE = ROOT / "docs" / "migrating_from_transformers_tf.md"


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_readme_links_the_page():
    assert "docs/migrating_from_transformers_tf.md" in (ROOT / "README.md").read_text(
        encoding="utf-8")


def test_each_section_shows_both_calls():
    text = PAGE.read_text(encoding="utf-8")
    for section in ("from_pretrained", "Tokenizer and dict inputs", "fit",
                    "predict and pipeline", "save_pretrained", "Serving export"):
        body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
        assert "```py\n" in body and "```python\n" in body, section


@pytest.mark.slow
def test_bert_tf_blocks_run_in_order(tmp_path, monkeypatch):
    import tensorflow as tf

    shutil.copytree(folder_of("sequence_classification"), tmp_path / "bert-sentiment")
    monkeypatch.chdir(tmp_path)
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in _blocks("python"):
            exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 (our own page)
    output = printed.getvalue()
    assert "BertForSequenceClassification (bert_tf head: classifier)" in output
    assert "vocab: bert-sentiment/vocab.txt (63 tokens), lower case" in output
    assert output.count("['negative', 'neutral', 'positive']") == 2
    assert namespace["logits"].shape == (2, 3)
    assert set(namespace["predicted"]) <= {"negative", "neutral", "positive"}
    np.testing.assert_allclose(namespace["served_logits"].numpy(), namespace["logits"],
                               atol=1e-5, rtol=0)
    np.testing.assert_allclose(namespace["reloaded"].predict(["What a great film!", "Dull."]),
                               namespace["logits"], atol=1e-5, rtol=0)
    assert sorted(os.listdir("sentiment-hf"))[:2] == ["config.json", "model.safetensors"]
    assert tf.is_tensor(namespace["served_logits"])
