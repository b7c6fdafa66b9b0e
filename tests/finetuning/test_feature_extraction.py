"""tools/extract_features.py's library: google-research JSONL from a real vocab and a tiny model."""

import json
import os

import numpy as np
import pytest

from bert_tf.finetuning.feature_extraction import extract_features, read_input_lines
from bert_tf.finetuning.table_reader import DataError
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from tests.fixtures import TINY_CONFIG, minilm_vocab_file, write_tiny_model_dir


@pytest.fixture(scope="module")
def four_layer_model_dir(tmp_path_factory):
    """The tiny model with 4 layers (google-research's default --layers=-1,-2,-3,-4), uncased."""
    model_dir = str(tmp_path_factory.mktemp("four_layers") / "model")
    write_tiny_model_dir(model_dir, vocab_file=minilm_vocab_file(), lower_case=True,
                         num_hidden_layers=4)
    return model_dir


def test_jsonl_matches_google_research_layout(four_layer_model_dir, tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("Hello, world!\nWho was Jim Henson? ||| Jim Henson was a puppeteer\n\n")
    examples = read_input_lines(str(source))
    assert examples[1] == ("Who was Jim Henson?", "Jim Henson was a puppeteer")
    output = tmp_path / "features.jsonl"
    assert extract_features(four_layer_model_dir, examples, str(output), max_seq_length=16) == 2
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == [0, 1]
    first = lines[0]["features"]
    assert [t["token"] for t in first] == ["[CLS]", "hello", ",", "world", "!", "[SEP]"]
    assert [layer["index"] for layer in first[0]["layers"]] == [-1, -2, -3, -4]
    assert len(first[0]["layers"][0]["values"]) == TINY_CONFIG.hidden_size
    pair_tokens = [t["token"] for t in lines[1]["features"]]
    assert pair_tokens.count("[SEP]") == 2 and pair_tokens[-1] == "[SEP]"
    # Values are the encoder's layer outputs, rounded to 6 decimals.
    encoder = BertEncoder.from_pretrained(four_layer_model_dir)
    inputs = BertPreprocessor(os.path.join(four_layer_model_dir, "vocab.txt"), seq_length=16)(
        np.array(["Hello, world!"]))
    hidden = encoder(inputs, training=False)["encoder_outputs"]
    np.testing.assert_allclose(first[2]["layers"][1]["values"], hidden[-2][0, 2].numpy(),
                               atol=1e-5)


def test_empty_input_is_an_error(tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("\n  \n")
    with pytest.raises(DataError, match="no text lines"):
        read_input_lines(str(source))


def test_linex_index_is_the_input_line(four_layer_model_dir, tmp_path):
    """Blank lines are skipped but keep their number; U+2028 does not end a line."""
    source = tmp_path / "input.txt"
    source.write_text("first\n\nthird\u2028still third\n   \nfifth ||| pair\n", encoding="utf-8")
    examples = read_input_lines(str(source))
    assert examples == {
        0: ("first", None), 2: ("third\u2028still third", None), 4: ("fifth", "pair")}
    output = tmp_path / "features.jsonl"
    assert extract_features(four_layer_model_dir, examples, str(output), max_seq_length=16) == 3
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == [0, 2, 4]
    assert [t["token"] for t in lines[2]["features"]] == ["[CLS]", "fifth", "[SEP]", "pair",
                                                         "[SEP]"]
    source.write_bytes(b"ok\n\xff\n")
    with pytest.raises(DataError, match=r"input.txt:2: not valid UTF-8"):
        read_input_lines(str(source))
