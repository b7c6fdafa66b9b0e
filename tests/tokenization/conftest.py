"""Shared fixtures for the tokenization tests: vocabs, reference ids, tokenizers."""

import os

import pytest

from tests.tokenization.reference_data import CASED_VOCAB, read_jsonl


@pytest.fixture(scope="session")
def minilm_vocab(minilm_hf_dir):
    return os.path.join(minilm_hf_dir, "vocab.txt")


@pytest.fixture(scope="session")
def reference_rows():
    """Reference ids from Hugging Face BertTokenizerFast (dev/make_tokenizer_fixtures.py)."""
    return read_jsonl("reference_ids.jsonl.xz")


@pytest.fixture(scope="session")
def uncased_tokenizer(minilm_vocab):
    from bert_tf.tokenization.bert_tokenizer import BertTokenizer

    return BertTokenizer(minilm_vocab, lower_case=True)


@pytest.fixture(scope="session")
def cased_tokenizer():
    from bert_tf.tokenization.bert_tokenizer import BertTokenizer

    return BertTokenizer(CASED_VOCAB, lower_case=False)
