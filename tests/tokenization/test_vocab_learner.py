"""Vocab learning: BERT's reserved tokens, and the vocab round-trips through the tokenizer."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_tf.data.records import beam_vocab
from bert_tf.tokenization import vocab as vocab_lib
from bert_tf.tokenization import vocab_learner
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

# Small text: lower thresholds and fewer search steps than the learner's defaults (made for
# corpora of millions of words), so the test takes seconds.
_FAST = {"lower_thresh": 2, "upper_thresh": 100, "num_iterations": 2}


@pytest.fixture(scope="module")
def training_lines(reference_rows):
    # Real BBC / licence lines (the reference fixture's), without the edge cases.
    return [r["text"] for r in reference_rows if len(r.get("text", "").split()) >= 8][:250]


@pytest.mark.parametrize("lower_case", [True, False])
def test_learned_vocab_round_trips_with_few_unknowns(tmp_path, training_lines, lower_case):
    vocab = vocab_learner.learn_vocab(training_lines, vocab_size=400, lower_case=lower_case,
                                      num_unused=5, **_FAST)
    assert vocab[:6] == ["[PAD]"] + [f"[unused{i}]" for i in range(5)]
    assert vocab[6:10] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    # The learner aims at vocab_size; single characters can come on top.
    assert 300 <= len(vocab) <= 440 and len(set(vocab)) == len(vocab)
    assert any(t.startswith("##") for t in vocab)
    assert vocab_lib.vocab_is_cased(vocab) != lower_case
    path = str(tmp_path / "vocab.txt")
    vocab_learner.write_vocab(vocab, path)
    tokenizer = BertTokenizer(path, lower_case=lower_case)
    ids = tokenizer.tokenize(tf.constant(training_lines)).flat_values.numpy()
    unk_rate = (ids == tokenizer.unk_id).mean()
    # Only characters outside the learner's alphabet can be unknown: rare symbols.
    assert unk_rate < 0.002, unk_rate
    # Learned pieces are used: the text is not spelled out letter by letter.
    assert len(ids) < 0.5 * sum(len(line) for line in training_lines)


def test_same_normalisation_as_the_tokenizer(training_lines):
    vocab = vocab_learner.learn_vocab(training_lines[:50] + ["STRASSE straße ﬁne Ａ [CLS]"],
                                      vocab_size=300, lower_case=True, num_unused=0, **_FAST)
    assert "ß" in vocab and "ﬁ" in vocab and "ａ" in vocab  # str.lower(), not NFKC case folding.
    assert not any(t.startswith("\ue000") for t in vocab)  # Typed special tokens are not words.


def test_no_words_is_a_clear_error():
    with pytest.raises(ValueError, match="no words"):
        vocab_learner.learn_vocab(["", " \x00 "], vocab_size=100)


@pytest.mark.subprocess
@pytest.mark.slow
def test_build_vocab_cli(tmp_path, training_lines):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(training_lines[:60]) + "\n", encoding="utf-8")
    output = tmp_path / "vocab.txt"
    result = subprocess.run(
        [sys.executable, os.path.join(root, "tools", "build_vocab.py"), f"--input_file={corpus}",
         f"--output_file={output}", "--vocab_size=200", "--num_unused=3", "--nodo_lower_case"],
        capture_output=True, text=True, cwd=root, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-2000:]
    vocab = vocab_lib.load_vocab(str(output))
    assert vocab[:4] == ["[PAD]", "[unused0]", "[unused1]", "[unused2]"]
    # The Beam word counts are kept beside the vocab, to learn other sizes from.
    assert vocab == vocab_learner.learn_vocab_from_counts(
        beam_vocab.read_counts(f"{output}.counts.tsv"), vocab_size=200, num_unused=3)
