"""Long lines: overlapping windows (google-research's doc_stride), pooled, against a split made
by hand; and the default, truncation, equal to `predict`."""

import numpy as np
import pytest

from bert_tf.corpus_inference.predictor import Predictor, PredictSettings
from bert_tf.corpus_inference.readers import Line
from bert_tf.corpus_inference.windows import window_spans
from bert_tf.keras_tasks import SentenceEncoder, TaskInputError, TextClassifier
from tests.corpus_inference.conftest import TEN_WORDS
from tests.corpus_inference.test_predict_tool import softmax

WORDS = TEN_WORDS.split()
# --max_seq_length=8: windows of 6 pieces; --doc_stride=4: starts 0 and 4, the second one
# reaching the line's end (every word of TEN_WORDS is one WordPiece).
HAND_SPLIT = [" ".join(WORDS[0:6]), " ".join(WORDS[4:10])]


def test_window_spans_cover_the_line_stride_apart():
    assert window_spans(10, window=6, stride=4) == [(0, 6), (4, 10)]
    assert window_spans(11, window=6, stride=4) == [(0, 6), (4, 10), (8, 11)]
    assert window_spans(6, window=6, stride=4) == [(0, 6)]
    assert window_spans(10, window=6, stride=4, all_windows=False) == [(0, 6)]
    assert window_spans(10, window=6, stride=9) == [(0, 6), (6, 10)]  # no gap between windows


def _predict(folder, text, long_lines, head="auto"):
    settings = PredictSettings(model=folder, head=head, max_seq_length=8, doc_stride=4,
                               long_lines=long_lines, batch_size=1)
    (prediction,) = Predictor(settings).predict([Line("x", text, (0, 1))])
    return prediction


def test_classifier_windows_average_the_windows_probabilities(classifier_dir):
    prediction = _predict(classifier_dir, TEN_WORDS, "windows")
    logits = TextClassifier.from_pretrained(classifier_dir, max_seq_length=8).predict(
        HAND_SPLIT, verbose=0)
    np.testing.assert_allclose(prediction.record["probabilities"], softmax(logits).mean(0),
                               atol=1e-6)
    assert prediction.long


def test_encoder_windows_average_then_normalize(tiny_model_dir):
    prediction = _predict(tiny_model_dir, TEN_WORDS, "windows")
    windows = SentenceEncoder.from_pretrained(tiny_model_dir, max_seq_length=8).predict(
        HAND_SPLIT, verbose=0)
    mean = windows.mean(0)
    np.testing.assert_allclose(prediction.record["embedding"], mean / np.linalg.norm(mean),
                               atol=1e-6)


def test_truncation_is_the_first_window_as_predict_does(tiny_model_dir):
    prediction = _predict(tiny_model_dir, TEN_WORDS, "truncate")
    expected = SentenceEncoder.from_pretrained(tiny_model_dir, max_seq_length=8).predict(
        [TEN_WORDS, HAND_SPLIT[0]], verbose=0)
    np.testing.assert_allclose(prediction.record["embedding"], expected[0], atol=1e-6)
    np.testing.assert_allclose(expected[0], expected[1], atol=1e-6)
    assert prediction.long


def test_windows_for_a_token_classifier_are_refused(tagger_dir):
    with pytest.raises(TaskInputError, match="--long_lines=windows pools a classifier's"):
        _predict(tagger_dir, TEN_WORDS, "windows")


def test_a_head_the_folder_lacks_is_refused_by_name(tiny_model_dir):
    with pytest.raises(TaskInputError,
                       match="holds no fine-tuned classifier head .*an encoder only"):
        _predict(tiny_model_dir, TEN_WORDS, "truncate", head="classifier")
