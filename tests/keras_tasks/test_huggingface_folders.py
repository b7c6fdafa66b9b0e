"""Keras task models from Hugging Face task folders: the head, its labels and problem type.

Fixtures and references: dev/make_hf_task_fixtures.py (transformers 4.57.6).
"""

import logging

import numpy as np
import pytest

from bert_tf.keras_tasks import MaskedLM, SentenceEncoder, TextClassifier, TokenClassifier
from bert_tf.keras_tasks.text_inputs import TaskInputError
from tests.checkpoints.conftest import folder_of, meta, references  # noqa: F401 (fixtures)


@pytest.mark.parametrize("fmt", ["pt", "tf"])
def test_text_classifier_takes_the_folders_head(fmt, references, meta):
    classifier = TextClassifier.from_pretrained(folder_of("sequence_classification", fmt))
    expected = meta["sequence_classification"]
    assert classifier.num_classes == 3
    assert classifier.label_names == expected["label_names"]
    assert classifier.problem_type == "single_label_classification"
    logits = classifier.predict(expected["texts"], verbose=0)
    np.testing.assert_allclose(logits, references["sequence_classification/logits"],
                               atol=1e-5, rtol=0)


def test_multi_label_classifier(references, meta):
    classifier = TextClassifier.from_pretrained(folder_of("multi_label_classification"))
    expected = meta["multi_label_classification"]
    assert classifier.label_names == expected["label_names"]
    assert classifier.problem_type == "multi_label_classification"
    texts = expected["texts"]
    np.testing.assert_allclose(classifier.predict(texts, verbose=0),
                               references["multi_label_classification/logits"], atol=1e-5,
                               rtol=0)
    labels = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]])
    history = classifier.fit(texts, labels, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    with pytest.raises(TaskInputError, match="rows of 4 0/1 values"):
        classifier.fit(texts, [0, 1, 2, 3], verbose=0)


def test_regressor_on_pairs(references, meta):
    regressor = TextClassifier.from_pretrained(folder_of("regression"), text_pair=True)
    assert regressor.num_classes == 1 and regressor.problem_type == "regression"
    assert regressor.label_names is None
    pairs = meta["regression"]["pairs"]
    logits = regressor.predict(([a for a, _ in pairs], [b for _, b in pairs]), verbose=0)
    np.testing.assert_allclose(logits, references["regression/logits"], atol=1e-5, rtol=0)


@pytest.mark.parametrize("fmt", ["pt", "tf"])
def test_token_classifier_returns_the_folders_tags(fmt, meta):
    # A cased folder with tokenizer.json only (no vocab.txt), as transformers 5 saves it.
    tagger = TokenClassifier.from_pretrained(folder_of("token_classification", fmt))
    assert tagger.preprocessor.lower_case is False
    assert tagger.label_names == meta["token_classification"]["label_names"]
    assert tagger.predict(meta["token_classification"]["words"], verbose=0) == (
        meta["token_classification"]["tags"])


def test_masked_lm_keeps_the_fine_tuned_head(references):
    model = MaskedLM.from_pretrained(folder_of("masked_lm", "tf"))
    ids = {key: references[f"masked_lm/{key}"]
           for key in ("input_ids", "attention_mask", "token_type_ids")}
    batch, length = ids["input_ids"].shape
    positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
    logits = model.predict({"input_word_ids": ids["input_ids"],
                            "input_mask": ids["attention_mask"],
                            "input_type_ids": ids["token_type_ids"],
                            "masked_lm_positions": positions}, verbose=0)["mlm_logits"]
    real = ids["attention_mask"].astype(bool)
    np.testing.assert_allclose(logits[real], references["masked_lm/logits"][real], atol=1e-5,
                               rtol=0)


def test_other_num_classes_gets_a_new_head_with_one_notice(caplog):
    with caplog.at_level(logging.WARNING, logger="absl"):
        classifier = TextClassifier.from_pretrained(folder_of("sequence_classification"),
                                                    num_classes=5)
    notices = [r.getMessage() for r in caplog.records if "new, untrained head" in r.getMessage()]
    assert len(notices) == 1 and "\n" not in notices[0]
    assert "3 classes; num_classes=5" in notices[0]
    assert classifier.num_classes == 5 and classifier.label_names is None


def test_a_head_of_another_task_is_not_taken():
    with pytest.raises(TaskInputError, match="no fine-tuned token_classifier head"):
        TokenClassifier.from_pretrained(folder_of("sequence_classification"))
    # The encoder of any task folder serves other tasks.
    encoder = SentenceEncoder.from_pretrained(folder_of("question_answering", "tf"))
    assert encoder.predict(["The film was great."], verbose=0).shape == (1, 8)


def test_saved_model_dir_reads_back(tmp_path, meta):
    classifier = TextClassifier.from_pretrained(folder_of("multi_label_classification"))
    classifier.save_model_dir(str(tmp_path / "model"))
    again = TextClassifier.from_pretrained(str(tmp_path / "model"))
    assert again.problem_type == "multi_label_classification"
    assert again.label_names == meta["multi_label_classification"]["label_names"]
    texts = meta["multi_label_classification"]["texts"]
    np.testing.assert_allclose(again.predict(texts, verbose=0),
                               classifier.predict(texts, verbose=0), atol=1e-6, rtol=0)
