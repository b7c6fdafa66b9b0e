"""Fixtures of the Keras task model tests: a tiny model directory with a real vocab, texts."""

import pytest

from tests.checkpoints.conftest import tiny_hf_dir  # noqa: F401  (a shared fixture)

# Short real sentences; labels: 1 iff the text is about music (learnable from words).
TEXTS = ["The band played a new song tonight.", "Stocks fell sharply on Monday.",
         "She sang the chorus twice.", "The bank raised interest rates.",
         "Guitar and drums filled the hall.", "Markets rallied after the report.",
         "The orchestra tuned before the concert.", "Shares of the firm dropped."]
LABELS = [1, 0, 1, 0, 1, 0, 1, 0]


@pytest.fixture(scope="module")
def tiny_dir(tiny_model_dir):
    """The conftest's tiny model directory (random 2-layer encoder, MiniLM vocab, uncased)."""
    from bert_tf.checkpoints.model_dir import write_model_info

    write_model_info(tiny_model_dir, head="encoder", do_lower_case=True)
    return tiny_model_dir
