"""TokenClassifier: a label per word (first WordPiece), fit learns a rule, .keras round trip."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.keras_tasks import TaskInputError, TokenClassifier
from tests.keras_tasks.conftest import fit_under

COLOURS = ["red", "blue", "green"]
OTHERS = ["the", "car", "is", "guitarist", "orchestra", "today", "very", "unbelievably"]


def _sentences(count, seed=0):
    """Random word lists; label 1 iff the word is a colour (a rule the model can learn)."""
    rng = np.random.default_rng(seed)
    words = [list(rng.choice(COLOURS + OTHERS, size=rng.integers(3, 8))) for _ in range(count)]
    return words, [[int(w in COLOURS) for w in sentence] for sentence in words]


def _first_piece_argmax(tagger, words, preprocessor=None):
    """Independent alignment: each word tokenized alone, its first piece's logits argmax."""
    preprocessor = preprocessor or tagger.preprocessor
    tokenize = preprocessor.tokenize
    rows = []
    for sentence in words:
        pieces = [tokenize(tf.constant([w])).merge_dims(1, -1)[0].numpy() for w in sentence]
        ids = np.concatenate([[preprocessor.tokenizer.cls_id], *pieces,
                              [preprocessor.tokenizer.sep_id]]).astype(np.int32)[None]
        logits = tagger({"input_word_ids": ids, "input_mask": np.ones_like(ids),
                         "input_type_ids": np.zeros_like(ids)}, training=False).numpy()[0]
        first = 1 + np.cumsum([0] + [len(p) for p in pieces[:-1]])
        rows.append([int(i) for i in np.argmax(logits[first], axis=-1)])
    return rows


def test_fit_learns_a_word_rule_in_length_grouped_batches_and_predictions_align(tiny_model_dir):
    tagger = TokenClassifier.from_pretrained(tiny_model_dir, num_classes=2, label_names=["O", "C"])
    tagger.compile(optimizer=keras.optimizers.Adam(3e-3))
    words, labels = _sentences(48)
    history = tagger.fit(words, labels, batch_size=8, epochs=6, group_by_length=True,
                         verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0], history.history
    test_words, test_labels = _sentences(8, seed=1)
    texts = [" ".join(sentence) for sentence in test_words]  # whitespace text works too
    predicted = tagger.predict(texts, batch_size=3)
    assert [len(p) for p in predicted] == [len(s) for s in test_words]
    names = [["O", "C"][i] for sentence in test_labels for i in sentence]
    assert [tag for row in predicted for tag in row] == names
    ids = [[["O", "C"].index(t) for t in row] for row in predicted]
    assert ids == _first_piece_argmax(tagger, test_words)


def test_keras_round_trip_predicts_the_same(tiny_model_dir, tmp_path):
    tagger = TokenClassifier.from_pretrained(tiny_model_dir, num_classes=3)
    words, _ = _sentences(6, seed=2)
    tagger.fit(words, [[i % 3 for i in range(len(s))] for s in words], batch_size=3, verbose=0)
    path = str(tmp_path / "tagger.keras")
    tagger.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, TokenClassifier)
    assert loaded.predict(words) == tagger.predict(words)
    assert _first_piece_argmax(loaded, words) == _first_piece_argmax(tagger, words)


def test_bad_labels_are_refused_before_a_step(tiny_model_dir):
    tagger = TokenClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    with pytest.raises(TaskInputError, match=r"y\[0\] has 1 labels for the 2 words"):
        tagger.fit([["a", "b"]], [[0]])
    with pytest.raises(TaskInputError, match=r"y\[0\]\[1\]=2 is outside 0..1"):
        tagger.fit([["a", "b"]], [[0, 2]])
    with pytest.raises(TaskInputError, match=r"x\[1\] has no words"):
        tagger.predict(["a b", "  "])
    assert int(tagger.optimizer.iterations) == 0


def test_model_dir_is_read_back_by_restore_model(tiny_model_dir, tmp_path):
    from bert_tf.export.restored_model import restore_model

    tagger = TokenClassifier.from_pretrained(tiny_model_dir, num_classes=2, label_names=["O", "C"])
    words, _ = _sentences(4, seed=3)
    tagger.save_model_dir(str(tmp_path / "tagger"))
    restored = restore_model(str(tmp_path / "tagger"), "token_classifier")
    assert restored.label_names == ["O", "C"]
    assert (_first_piece_argmax(restored.model, words, tagger.preprocessor)
            == _first_piece_argmax(tagger, words))
    # from_pretrained gives back the head and its label names.
    again = TokenClassifier.from_pretrained(str(tmp_path / "tagger"))
    assert again.label_names == ["O", "C"] and again.predict(words) == tagger.predict(words)


def test_a_dataset_of_words_gives_the_numbers_of_lists(tiny_model_dir):
    tagger = TokenClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    words, labels = _sentences(10, seed=4)
    valid_words, valid_labels = _sentences(6, seed=5)

    def dataset(words, labels=None):
        columns = (tf.ragged.constant(words),) + (() if labels is None
                                                   else (tf.ragged.constant(labels),))
        return tf.data.Dataset.from_tensor_slices(columns[0] if labels is None else columns
                                                  ).ragged_batch(4)

    history = tagger.fit(dataset(words, labels), validation_data=(valid_words, valid_labels),
                         epochs=1, verbose=0)
    assert int(tagger.optimizer.iterations) == 3  # batches of 4, 4, 2: the dataset's own
    assert history.history["val_loss"][0] == pytest.approx(  # one batch, as fit's default 32
        tagger.evaluate(valid_words, valid_labels, verbose=0), abs=1e-6)
    assert tagger.evaluate(dataset(valid_words, valid_labels), verbose=0) == pytest.approx(
        tagger.evaluate(valid_words, valid_labels, batch_size=4, verbose=0), abs=1e-6)
    history = tagger.fit(dataset(words, labels), validation_data=dataset(
        valid_words, valid_labels), epochs=1, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(
        tagger.evaluate(valid_words, valid_labels, batch_size=4, verbose=0), abs=1e-6)
    texts = tf.data.Dataset.from_tensor_slices([" ".join(s) for s in valid_words]).batch(4)
    assert (tagger.predict(dataset(valid_words)) == tagger.predict(texts)
            == tagger.predict(valid_words, batch_size=4))
    with pytest.raises(TaskInputError, match=r"Batch first, e\.g\. dataset\.ragged_batch"):
        tagger.fit(tf.data.Dataset.from_tensor_slices(
            (tf.ragged.constant(words), tf.ragged.constant(labels))))
    with pytest.raises(TaskInputError, match="repeats forever"):
        tagger.fit(dataset(words, labels).repeat())


@pytest.mark.parametrize("setting", ["mixed_bfloat16", "mirrored"])
def test_a_fit_step_in_bfloat16_and_under_mirrored_strategy(tiny_model_dir, setting):
    words, labels = _sentences(8, seed=6)
    tagger, _ = fit_under(setting, lambda: TokenClassifier.from_pretrained(tiny_model_dir, 2),
                          lambda model: model.fit(words, labels, batch_size=4, verbose=0))
    assert tagger.optimizer.iterations.numpy() == 2  # two global batches of 4
    predicted = tagger.predict(words, batch_size=3)  # three batches
    assert [len(p) for p in predicted] == [len(s) for s in words]
    if setting == "mirrored":  # float32: each row is its own sentence's, on two replicas too
        assert predicted == _first_piece_argmax(tagger, words)
