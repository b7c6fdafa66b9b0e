"""Every Python block of the README and the job pages (docs/*.md) runs, verbatim.

A ```python block is either an example file next to this test, run on real data by
test_readme.py and test_readme_fit_example.py, or part of a page that is run here in order, in
one namespace, on tiny models made for it (as test_migration_doc.py runs its page). Blocks
fenced ```py are shown, not run: they need a server or a package the tests do not install.
"""

import contextlib
import io
import os
import pathlib
import re

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
# Pages whose Python blocks are the example files run by the README tests.
EXAMPLES = {
    "README.md": ["readme_quickstart.py"],
    "docs/fine_tuning.md": ["readme_fit_strings.py", "readme_fit_example.py"],
}
# Pages run block by block here (docs/migrating_from_transformers_tf.md: test_migration_doc.py,
# docs/migrating_from_tf_hub.md: test_migration_tf_hub_doc.py).
RUN_IN_ORDER = ["docs/serving.md", "docs/migrating_from_transformers_tf.md",
                "docs/migrating_from_tf_hub.md"]


def python_blocks(page):
    """The ```python blocks of `page` (relative to the repository root), in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_every_python_block_is_run_by_a_test():
    pages = ["README.md"] + sorted(str(path.relative_to(ROOT))
                                   for path in (ROOT / "docs").glob("*.md"))
    unrun = []
    for page in pages:
        if page in RUN_IN_ORDER:
            continue
        examples = [(HERE / name).read_text(encoding="utf-8") for name in EXAMPLES.get(page, [])]
        unrun += [f"{page}: {block.splitlines()[0]}" for block in python_blocks(page)
                  if block not in examples]
    assert not unrun, ("Python blocks that no test runs (make them an example file or add the "
                       "page to RUN_IN_ORDER):\n" + "\n".join(unrun))


@pytest.mark.parametrize("page,example", [(page, name) for page, names in EXAMPLES.items()
                                          for name in names])
def test_the_page_shows_the_tested_example_verbatim(page, example):
    assert (HERE / example).read_text(encoding="utf-8") in python_blocks(page)


def _write_tiny_model_dirs():
    """./minilm (encoder) and ./bbc_classifier (3 labels): tiny, random, 128 positions."""
    from bert_tf.checkpoints.model_dir import write_model_dir
    from bert_tf.configs import BertConfig
    from bert_tf.models import BertClassifier, BertEncoder
    from tests.fixtures import LABELS
    from tests.tokenization.reference_data import CASED_VOCAB as TINY_VOCAB

    with open(TINY_VOCAB, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    config = BertConfig(vocab_size=vocab_size, hidden_size=12, num_hidden_layers=2,
                        num_attention_heads=3, intermediate_size=20, max_position_embeddings=128)
    info = {"do_lower_case": False, "max_seq_length": 128}
    write_model_dir("minilm", config, vocab_file=TINY_VOCAB, info=dict(info, head="encoder"),
                    encoder=BertEncoder(config))
    classifier = BertClassifier(BertEncoder(config), len(LABELS))
    write_model_dir("bbc_classifier", config, vocab_file=TINY_VOCAB,
                    info=dict(info, head="classifier", label_names=LABELS),
                    **classifier.checkpoint_items())
    return config, LABELS


@pytest.mark.slow
def test_serving_page_runs_in_order(tmp_path, monkeypatch):
    """docs/serving.md: the raw-text SavedModel, the int8 TFLite, the TF Hub pair, ONNX."""
    from bert_tf.export.exporter import export_saved_model
    from bert_tf.export.onnx_export import export_onnx
    from bert_tf.export.tflite import export_tflite

    monkeypatch.chdir(tmp_path)
    config, labels = _write_tiny_model_dirs()
    # What the page's tools/ commands write (the tools themselves: tests/tools, tests/export).
    export_saved_model("minilm", "serving/bert", "encoder")
    export_saved_model("minilm", "serving/preprocess", "preprocessor")
    export_saved_model("minilm", "serving/hub_encoder", "hub_encoder")
    export_tflite("bbc_classifier", "bbc_int8.tflite", "classifier", quantization="dynamic_int8")
    export_onnx("minilm", "minilm_onnx", head="sentence_encoder", text_input=True)
    export_onnx("bbc_classifier", "bbc_onnx", quantize="int8")

    blocks = python_blocks("docs/serving.md")
    assert len(blocks) == 4
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], "docs/serving.md", "exec"), namespace)  # noqa: S102 (our page)
        assert namespace["outputs"]["pooled_output"].shape == (1, config.hidden_size)
        exec(compile(blocks[1], "docs/serving.md", "exec"), namespace)  # noqa: S102
        assert namespace["outputs"]["label"].astype(str).tolist()[0] in labels
        np.testing.assert_allclose(namespace["outputs"]["probabilities"].sum(), 1.0, atol=1e-3)
        exec(compile(blocks[2], "docs/serving.md", "exec"), namespace)  # noqa: S102
        exec(compile(blocks[3], "docs/serving.md", "exec"), namespace)  # noqa: S102
    assert namespace["embedding"].shape == (1, config.hidden_size)
    assert namespace["probabilities"].shape == (1, len(labels))
    assert namespace["hub_outputs"]["pooled_output"].shape == (1, config.hidden_size)
    assert len(namespace["hub_outputs"]["encoder_outputs"]) == config.num_hidden_layers
    assert f"(1, {config.hidden_size})" in printed.getvalue()
    assert os.path.isfile("serving/bert/1/saved_model.pb")
