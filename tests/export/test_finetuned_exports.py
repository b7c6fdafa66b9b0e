"""A fine-tuned MiniLM classifier keeps its accuracy as int8 TFLite and as a bfloat16 SavedModel,
and ONNX Runtime's float32 and int8 graphs of it (the peer, in `.venv-ref`) are scored beside.

BBC News sentences (5 topics), the real MiniLM, one short epoch; the full-size run is
`benchmarks/serving_tflite.py` (2,048 / 1,000 sentences: docs/lab/2026-12-05-serving.md).
"""

import os

import numpy as np
import pytest

from benchmarks.real_sentences import bbc_news_sentences
from benchmarks.serving_tflite import REF_PYTHON, export_rows, fine_tune_classifier
from bert_tf.export.onnx_export import export_onnx

pytestmark = pytest.mark.slow

TRAIN, HELD_OUT = 640, 500
ORT_SYSTEMS = ("saved_model float32", "onnxruntime optimized", "onnxruntime int8")
TENSORFLOW_SYSTEMS = ("saved_model float32", "saved_model bfloat16", "tflite dynamic_int8")


@pytest.fixture(scope="module")
def split():
    """(sentences, labels, label names) of the train and held-out sentences."""
    return bbc_news_sentences(TRAIN + HELD_OUT)


@pytest.fixture(scope="module")
def classifier_dir(minilm_model_dir, split, tmp_path_factory):
    """MiniLM fine-tuned on the first `TRAIN` sentences (once for the module)."""
    sentences, labels, names = split
    return fine_tune_classifier(minilm_model_dir, str(tmp_path_factory.mktemp("classifier")),
                                sentences[:TRAIN], labels[:TRAIN], names)


def _rows(classifier_dir, split, work_dir, systems, **options):
    sentences, labels, _ = split
    return {row["system"]: row for row in export_rows(
        classifier_dir, sentences[TRAIN:], labels[TRAIN:], str(work_dir), systems=systems,
        **options)}


@pytest.fixture(scope="module")
def rows_without_peer(classifier_dir, split, tmp_path_factory):
    """The TensorFlow exports scored, and the ONNX Runtime rows asked of a Python that is not
    there: one float32 export (the costly part) for the two tests below."""
    work_dir = tmp_path_factory.mktemp("without_peer")
    return _rows(classifier_dir, split, work_dir, TENSORFLOW_SYSTEMS + ORT_SYSTEMS[1:],
                 ref_python=str(work_dir / "no_python"))


def test_int8_tflite_and_bfloat16_keep_the_fine_tuned_accuracy(rows_without_peer):
    rows = rows_without_peer
    float32 = rows["saved_model float32"]["accuracy"]
    assert float32 > 0.5, rows  # it learned (chance: 0.2)
    int8, bfloat16 = rows["tflite dynamic_int8"], rows["saved_model bfloat16"]
    assert int8["accuracy"] >= float32 - 0.01, rows  # at most 1 point lost
    assert int8["megabytes"] < 0.3 * rows["saved_model float32"]["megabytes"]
    assert bfloat16["max_abs_logit_diff"] <= 2e-2, rows
    assert bfloat16["agreement"] >= 0.995, rows


def test_onnx_int8_keeps_the_fine_tuned_accuracy(classifier_dir, split, tmp_path):
    """bert_tf's own ONNX export, strings in: int8 within 0.5 point of float32."""
    from tests.export.test_onnx_text import session_of

    sentences, labels, _ = split
    accuracy = {}
    for quantize in ("none", "int8"):
        path = export_onnx(classifier_dir, str(tmp_path / quantize), text_input=True,
                           quantize=quantize).path
        session = session_of(path)
        logits = np.concatenate([session.run(["logits"], {"text": np.array(
            sentences[i:i + 32], dtype=object)})[0] for i in range(TRAIN, TRAIN + HELD_OUT, 32)])
        accuracy[quantize] = float(np.mean(logits.argmax(-1) == labels[TRAIN:]))
    assert accuracy["none"] > 0.5, accuracy  # it learned (chance: 0.2)
    assert accuracy["int8"] >= accuracy["none"] - 0.005, accuracy


@pytest.mark.subprocess
@pytest.mark.skipif(not os.path.exists(REF_PYTHON),
                    reason="needs the dev-only reference venv .venv-ref (PyTorch, transformers, "
                           "onnxruntime)")
def test_onnxruntime_rows_score_the_same_classifier_exported_from_pytorch(
        classifier_dir, split, tmp_path):
    rows = _rows(classifier_dir, split, tmp_path, ORT_SYSTEMS)
    optimized, int8 = rows["onnxruntime optimized"], rows["onnxruntime int8"]
    # The same weights and tokens through PyTorch's export and ORT's fusions: float32 rounding.
    assert optimized["max_abs_logit_diff"] <= 1e-3, rows
    assert optimized["accuracy"] == rows["saved_model float32"]["accuracy"], rows
    assert 0 <= int8["accuracy"] <= 1 and int8["agreement"] >= 0.9, rows
    assert int8["megabytes"] < 0.3 * optimized["megabytes"], rows


def test_onnxruntime_rows_say_why_without_the_peer_and_the_others_still_score(
        rows_without_peer):
    rows = rows_without_peer
    assert rows["saved_model float32"]["agreement"] == 1.0
    assert all(0 <= rows[name]["accuracy"] <= 1 for name in TENSORFLOW_SYSTEMS), rows
    for name in ORT_SYSTEMS[1:]:
        assert rows[name] == {"system": name, "error": rows[name]["error"]}
        assert "no_python does not exist" in rows[name]["error"], rows
