"""What a classifier's result holds beyond single-label: multi-label names and sigmoids, a
regressor's score; each equal to the model's own `predict`."""

import numpy as np
import pytest

from bert_tf.corpus_inference.predictor import Predictor, PredictSettings
from bert_tf.corpus_inference.readers import Line
from bert_tf.keras_tasks import TextClassifier
from bert_tf.keras_tasks.text_classifier import MULTI_LABEL
from tests.corpus_inference.conftest import LABELS

TEXTS = ["Ada Lovelace wrote the first program.", "It was never built.", "Short."]


def _results(folder, **settings):
    lines = [Line(str(i), text, (0, i + 1)) for i, text in enumerate(TEXTS)]
    return [p.record for p in Predictor(PredictSettings(model=folder, **settings)).predict(lines)]


@pytest.mark.parametrize("problem", ["multi_label", "regression"])
def test_multi_label_and_regression_results_follow_predict(tiny_model_dir, tmp_path, problem):
    if problem == "multi_label":
        model = TextClassifier.from_pretrained(tiny_model_dir, num_classes=3, label_names=LABELS,
                                               problem_type=MULTI_LABEL)
        model.head.bias.assign([2.0, 0.0, -2.0])  # one label surely in, one surely out
    else:
        model = TextClassifier.from_pretrained(tiny_model_dir, num_classes=1)
    model.save_model_dir(str(tmp_path / "model"))
    results = _results(str(tmp_path / "model"), batch_size=2)
    logits = TextClassifier.from_pretrained(str(tmp_path / "model")).predict(TEXTS, verbose=0)
    if problem == "regression":
        np.testing.assert_allclose([r["score"] for r in results], logits[:, 0], atol=1e-5)
        return
    probabilities = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose([r["probabilities"] for r in results], probabilities, atol=1e-5)
    assert [r["label"] for r in results] == [
        [name for name, p in zip(LABELS, row) if p >= 0.5] for row in probabilities]
    assert all("negative" in r["label"] and "positive" not in r["label"] for r in results)
