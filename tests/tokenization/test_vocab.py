"""Vocab files: clear errors for unusable files, a warning when lower_case contradicts the vocab."""

import logging

import pytest

from bert_tf.tokenization import vocab as vocab_lib
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from tests.tokenization.reference_data import CASED_VOCAB

_GOOD = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s"]


def _write(tmp_path, tokens, name="vocab.txt"):
    path = tmp_path / name
    path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    return str(path)


def test_load_vocab_keeps_order_and_special_ids(tmp_path):
    vocab = vocab_lib.load_vocab(_write(tmp_path, _GOOD))
    assert vocab == _GOOD
    assert vocab_lib.special_token_ids(vocab) == vocab_lib.SpecialTokens(0, 2, 3, 4, 5)


def test_missing_file_names_it(tmp_path):
    path = str(tmp_path / "nope" / "vocab.txt")
    with pytest.raises(vocab_lib.VocabError, match="nope/vocab.txt.*does not exist"):
        vocab_lib.load_vocab(path)


def test_empty_file_names_it(tmp_path):
    path = _write(tmp_path, [])
    with pytest.raises(vocab_lib.VocabError, match="vocab.txt.*is empty"):
        vocab_lib.load_vocab(path)


@pytest.mark.parametrize("token", vocab_lib.SPECIAL_TOKENS)
def test_missing_special_token_names_file_and_token(tmp_path, token):
    path = _write(tmp_path, [t for t in _GOOD if t != token])
    with pytest.raises(vocab_lib.VocabError) as error:
        vocab_lib.load_vocab(path)
    assert path in str(error.value) and token in str(error.value)


def test_blank_and_duplicate_tokens_name_the_line(tmp_path):
    with pytest.raises(vocab_lib.VocabError, match="line 3 is blank"):
        vocab_lib.load_vocab(_write(tmp_path, _GOOD[:2] + [""] + _GOOD[2:]))
    with pytest.raises(vocab_lib.VocabError, match="line 9.*'hello'.*line 7"):
        vocab_lib.load_vocab(_write(tmp_path, _GOOD + ["hello"]))


def test_preprocessor_reports_vocab_errors_not_tf_errors(tmp_path):
    with pytest.raises(vocab_lib.VocabError, match=r"\[MASK\]"):
        BertPreprocessor(_write(tmp_path, _GOOD[:-3]))


def test_casing_heuristic_on_real_vocabs(minilm_vocab):
    assert not vocab_lib.vocab_is_cased(vocab_lib.load_vocab(minilm_vocab))
    assert vocab_lib.vocab_is_cased(vocab_lib.load_vocab(CASED_VOCAB))


@pytest.mark.parametrize("vocab_name,lower_case,warns", [
    ("cased", True, "looks cased"), ("uncased", False, "looks uncased"),
    ("cased", False, None), ("uncased", True, None)])
def test_case_mismatch_warns(minilm_vocab, caplog, vocab_name, lower_case, warns):
    path = CASED_VOCAB if vocab_name == "cased" else minilm_vocab
    vocab = vocab_lib.load_vocab(path)
    with caplog.at_level(logging.WARNING):
        agrees = vocab_lib.check_case_matches_vocab(vocab, lower_case, path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert agrees == (warns is None)
    if warns:
        assert len(warnings) == 1 and warns in warnings[0] and path in warnings[0]
    else:
        assert not warnings
