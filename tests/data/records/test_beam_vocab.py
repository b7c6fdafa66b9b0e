"""Vocab learning on Beam: the same vocab as the in-memory learner, on the shipped corpus."""

import gzip

import pytest
import tensorflow as tf

from bert_tf.data import document_reader
from bert_tf.data.records import beam_vocab
from bert_tf.tokenization import vocab_learner
from tests.data.conftest import TRAIN

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam


@pytest.mark.slow
def test_beam_vocab_equals_in_process_vocab_on_the_shipped_corpus(tmp_path):
    # Its first quarter (7,000 lines, ~8,000 distinct words): both learners' time is the
    # counting, linear in the lines; the vocab still reaches the size asked for.
    with gzip.open(TRAIN, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    part = str(tmp_path / "train_part.txt.gz")
    with gzip.open(part, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines[:len(lines) // 4]) + "\n")
    counts_file = str(tmp_path / "counts.tsv")
    vocab = beam_vocab.learn_vocab(part, counts_file, vocab_size=2000)
    lines = tf.data.TextLineDataset(part, compression_type="GZIP")
    assert vocab == vocab_learner.learn_vocab(lines, vocab_size=2000)
    assert 1800 < len(vocab) <= 2100 and vocab[0] == "[PAD]"
    # The counts file holds every word once, with the count summed over the whole text (a
    # batch of 1,024 lines holds "lord" at most 658 times; the quarter, 2,546).
    counts = beam_vocab.read_counts(counts_file)
    assert counts["lord"] > 2000 and sum(1 for _ in open(counts_file,
                                                         encoding="utf-8")) == len(counts)


def test_glob_matching_nothing(tmp_path):
    with pytest.raises(document_reader.InputError, match="matches no file"):
        beam_vocab.learn_vocab(f"{tmp_path}/*.txt", str(tmp_path / "counts.tsv"), vocab_size=100)


def test_no_words_is_a_clear_error(tmp_path):
    (tmp_path / "blank.txt").write_text("\n \n\x00\n")
    with pytest.raises(ValueError, match="no words"):
        beam_vocab.learn_vocab(str(tmp_path / "blank.txt"), str(tmp_path / "counts.tsv"),
                               vocab_size=100)
