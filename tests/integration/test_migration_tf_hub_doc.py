"""docs/migrating_from_tf_hub.md: its bert_tf blocks run, verbatim and in order.

The TF Hub, Model Garden and keras-hub blocks are fenced `py` (shown, not run: none of those
libraries is a test dependency); the bert_tf ones `python`, run here on the committed tiny
fixtures those libraries made (tests/testdata/tf_hub, model_garden, keras_hub), copied under
the names the page uses, as tests/integration/test_migration_doc.py runs its page.
"""

import contextlib
import io
import json
import os
import pathlib
import re
import shutil

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent
PAGE = ROOT / "docs" / "migrating_from_tf_hub.md"
TESTDATA = ROOT / "tests" / "testdata"
# Fixture -> the folder name the page uses.
FOLDERS = {TESTDATA / "tf_hub" / "bert_uncased_tiny": "bert_en_uncased_L-12_H-768_A-12",
           TESTDATA / "model_garden" / "encoder": "uncased_L-12_H-768_A-12",
           TESTDATA / "keras_hub" / "classifier": "review_classifier"}
SECTIONS = ("Load the preprocessing model and the encoder", "Train on raw strings",
            "Export for TF Serving", "Model Garden checkpoints", "keras-hub presets")


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_readme_and_checkpoints_page_link_the_page():
    assert "(docs/migrating_from_tf_hub.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(migrating_from_tf_hub.md)" in (ROOT / "docs" / "checkpoints.md").read_text(
        encoding="utf-8")


def test_each_section_shows_both_calls():
    text = PAGE.read_text(encoding="utf-8")
    for section in SECTIONS:
        body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
        assert "```py\n" in body and "```python\n" in body, section


@pytest.mark.slow
def test_bert_tf_blocks_run_in_order(tmp_path, monkeypatch):
    for fixture, name in FOLDERS.items():
        shutil.copytree(fixture, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in _blocks("python"):
            exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 (our own page)
    output = printed.getvalue()
    # Each printed line the page shows in a comment is what the block printed.
    for block in _blocks("python"):
        for shown in re.findall(r"^# (.+)$", block, flags=re.M):
            assert shown in output, shown
        for shown in re.findall(r"print\(.*\)  # (.+)$", block, flags=re.M):
            assert shown in output, shown

    logits = namespace["logits"]
    assert logits.shape == (2, 2) and np.isfinite(logits).all()
    assert 0.0 <= namespace["accuracy"] <= 1.0
    served = namespace["serving_results"]
    np.testing.assert_allclose(served["logits"].numpy(), logits, atol=1e-5, rtol=0)
    np.testing.assert_array_equal(namespace["reloaded_results"]["logits"], served["logits"])
    assert namespace["pooled"].shape[0] == 2 and np.isfinite(namespace["pooled"]).all()
    assert set(served["label"].numpy().astype(str)) <= {"negative", "positive"}
    assert os.path.basename(namespace["path"]) == "1"

    assert namespace["garden_logits"].shape == (2, 2)
    with open("bert_base/model_info.json", encoding="utf-8") as f:
        assert json.load(f)["do_lower_case"] is True
    assert namespace["review_logits"].shape == (2, 3)

    # The keras-hub preset bert_tf wrote reads back as the same classifier (round trip).
    np.testing.assert_allclose(namespace["from_preset"].predict(namespace["examples"]), logits,
                               atol=1e-5, rtol=0)
