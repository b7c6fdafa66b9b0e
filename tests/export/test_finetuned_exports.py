"""A fine-tuned MiniLM classifier keeps its accuracy as int8 TFLite and as a bfloat16 SavedModel.

BBC News sentences (5 topics), the real MiniLM, one short epoch; the full-size run is
`benchmarks/serving_tflite.py` (2,048 / 1,000 sentences: docs/lab/2026-12-05-serving.md).
"""

import pytest

from benchmarks.real_sentences import bbc_news_sentences
from benchmarks.serving_tflite import export_rows, fine_tune_classifier

pytestmark = pytest.mark.slow

TRAIN, HELD_OUT = 640, 500


def test_int8_tflite_and_bfloat16_keep_the_fine_tuned_accuracy(minilm_model_dir, tmp_path):
    sentences, labels, names = bbc_news_sentences(TRAIN + HELD_OUT)
    classifier_dir = fine_tune_classifier(minilm_model_dir, str(tmp_path / "classifier"),
                                          sentences[:TRAIN], labels[:TRAIN], names)
    rows = {row["system"]: row for row in export_rows(
        classifier_dir, sentences[TRAIN:], labels[TRAIN:], str(tmp_path / "exports"),
        systems=("saved_model float32", "saved_model bfloat16", "tflite dynamic_int8"))}
    float32 = rows["saved_model float32"]["accuracy"]
    assert float32 > 0.5, rows  # it learned (chance: 0.2)
    int8, bfloat16 = rows["tflite dynamic_int8"], rows["saved_model bfloat16"]
    assert int8["accuracy"] >= float32 - 0.01, rows  # at most 1 point lost
    assert int8["megabytes"] < 0.3 * rows["saved_model float32"]["megabytes"]
    assert bfloat16["max_abs_logit_diff"] <= 2e-2, rows
    assert bfloat16["agreement"] >= 0.995, rows
