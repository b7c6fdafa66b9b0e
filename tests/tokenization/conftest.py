"""Shared fixtures for the tokenization tests: vocabs, reference ids, tokenizers."""

import base64
import json
import lzma
import os

import pytest

TESTDATA = os.path.join(os.path.dirname(__file__), os.pardir, "testdata", "tokenization")
CASED_VOCAB = os.path.join(TESTDATA, "bbc_cased_vocab.txt")


def read_jsonl(name):
    with lzma.open(os.path.join(TESTDATA, name), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def row_bytes(row):
    """The input a reference row was made from, as bytes (some are deliberately not UTF-8)."""
    if "utf8_b64" in row:
        return base64.b64decode(row["utf8_b64"])
    return row["text"].encode("utf-8")


@pytest.fixture(scope="session")
def minilm_vocab(minilm_hf_dir):
    return os.path.join(minilm_hf_dir, "vocab.txt")


@pytest.fixture(scope="session")
def reference_rows():
    """Reference ids from Hugging Face BertTokenizerFast (tools/make_tokenizer_fixtures.py)."""
    return read_jsonl("reference_ids.jsonl.xz")


@pytest.fixture(scope="session")
def uncased_tokenizer(minilm_vocab):
    from bert_tf.tokenization.bert_tokenizer import BertTokenizer

    return BertTokenizer(minilm_vocab, lower_case=True)


@pytest.fixture(scope="session")
def cased_tokenizer():
    from bert_tf.tokenization.bert_tokenizer import BertTokenizer

    return BertTokenizer(CASED_VOCAB, lower_case=False)
