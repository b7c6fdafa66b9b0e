"""Paths and readers for the committed tokenization reference fixtures."""

import base64
import json
import lzma
import os

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
