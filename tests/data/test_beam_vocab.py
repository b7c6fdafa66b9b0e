"""Vocab learning on Beam: the same vocab as the in-memory learner, on the shipped corpus."""

import pytest
import tensorflow as tf

from tests.data.conftest import TRAIN
from bert_tf.data import beam_vocab
from bert_tf.data import document_reader
from bert_tf.tokenization import vocab_learner


@pytest.mark.slow
def test_beam_vocab_equals_in_process_vocab_on_the_shipped_corpus(tmp_path):
    counts_file = str(tmp_path / "counts.tsv")
    vocab = beam_vocab.learn_vocab(TRAIN, counts_file, vocab_size=2000)
    lines = tf.data.TextLineDataset(TRAIN, compression_type="GZIP")
    assert vocab == vocab_learner.learn_vocab(lines, vocab_size=2000)
    assert 1800 < len(vocab) <= 2100 and vocab[0] == "[PAD]"
    # The counts file holds every word once, with the count summed over the whole corpus.
    counts = beam_vocab.read_counts(counts_file)
    assert counts["lord"] > 5000 and sum(1 for _ in open(counts_file, encoding="utf-8")) == len(counts)


def test_glob_matching_nothing(tmp_path):
    with pytest.raises(document_reader.InputError, match="matches no file"):
        beam_vocab.learn_vocab(f"{tmp_path}/*.txt", str(tmp_path / "counts.tsv"), vocab_size=100)


def test_no_words_is_a_clear_error(tmp_path):
    (tmp_path / "blank.txt").write_text("\n \n\x00\n")
    with pytest.raises(ValueError, match="no words"):
        beam_vocab.learn_vocab(str(tmp_path / "blank.txt"), str(tmp_path / "counts.tsv"), vocab_size=100)
