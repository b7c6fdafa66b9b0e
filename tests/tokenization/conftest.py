"""Shared fixtures for the tokenization tests: vocabs, reference ids, tokenizers."""

import pytest

from tests.fixtures import minilm_vocab_file
from tests.tokenization.reference_data import CASED_VOCAB, read_jsonl


@pytest.fixture(scope="session")
def minilm_vocab():
    """The real uncased vocab (the MiniLM package's; its weights are not loaded)."""
    return minilm_vocab_file()


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
