"""BertTokenizer: identical ids to Hugging Face BertTokenizerFast, robust to bad input."""

import pytest
import tensorflow as tf

from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from tests.tokenization.reference_data import row_bytes


def _mismatches(rows, key, ids):
    """Rows whose ids or word grouping differ from the reference, for a readable failure."""
    flat = ids.merge_dims(1, 2).to_list()
    words = ids.row_lengths(axis=2).to_list()
    bad = []
    for row, got, got_words in zip(rows, flat, words):
        if got != row[key + "_ids"] or got_words != row[key + "_words"]:
            bad.append(f"{row_bytes(row)[:60]!r}: ours {got[:12]} words {got_words[:12]}, "
                       f"reference {row[key + '_ids'][:12]} words {row[key + '_words'][:12]}")
    return bad


@pytest.mark.parametrize("path", ["tokenize", "tokenize_with_offsets"])
@pytest.mark.parametrize("case", ["uncased", "cased"])
def test_ids_and_words_equal_reference_on_every_line(case, path, reference_rows, request):
    tokenizer = request.getfixturevalue(case + "_tokenizer")
    rows = [r for r in reference_rows if case + "_ids" in r]
    assert len(rows) >= (2000 if case == "uncased" else 1000)
    strings = tf.constant([row_bytes(r) for r in rows])
    ids = tokenizer.tokenize(strings) if path == "tokenize" else tokenizer.tokenize_with_offsets(
        strings)[0]
    bad = _mismatches(rows, case, ids)
    assert not bad, f"{len(bad)} of {len(rows)} lines differ:\n" + "\n".join(bad[:10])


def test_fixture_covers_the_known_differences_of_tensorflow_text(reference_rows):
    texts = {r.get("text") for r in reference_rows}
    for needle in ("\x00", "ß", "ﬁ", "Ｆ", "ΟΔΟΣ", "\ufffd", "[CLS]", "x" * 101, "é" * 60):
        assert any(t and needle in t for t in texts), needle
    assert sum("utf8_b64" in r for r in reference_rows) >= 5
    real_lines = [r for r in reference_rows if len(r.get("text", "").split()) >= 3]
    assert len(real_lines) >= 2000


def test_offsets_point_at_the_pieces_in_the_input(uncased_tokenizer, minilm_vocab):
    vocab = open(minilm_vocab, encoding="utf-8").read().split("\n")
    line = "The quick, brown fox's [SEP] re-entry costs $5.99!"
    outputs = uncased_tokenizer.tokenize_with_offsets(tf.constant([line]))
    ids, starts, ends = (t[0].merge_dims(0, 1).numpy() for t in outputs)
    data = line.encode()
    for i, s, e in zip(ids, starts, ends):
        piece = vocab[i].removeprefix("##")
        assert data[s:e].decode().lower() == piece.lower(), (vocab[i], s, e)


def test_offsets_span_whole_word_where_normalisation_changes_length(uncased_tokenizer):
    line = "naïve x"
    ids, starts, ends = uncased_tokenizer.tokenize_with_offsets(tf.constant([line]))
    assert starts.to_list()[0][0][0] == 0 and ends.to_list()[0][0][-1] == len("naïve".encode())
    assert starts.to_list()[0][1] == [len("naïve ".encode())]


@pytest.mark.parametrize("strings", [
    [""], [" \t\n "], ["\x00\x01\u200b\x7f"], [b"\xff\xfe\xc3"], ["[CLS]"], ["\u0301"]],
    ids=["empty", "whitespace", "controls", "invalid_utf8", "special", "lone_accent"])
def test_bad_input_gives_valid_output(uncased_tokenizer, strings):
    ids = uncased_tokenizer.tokenize(tf.constant(strings))
    offsets_ids = uncased_tokenizer.tokenize_with_offsets(tf.constant(strings))[0]
    assert ids.to_list() == offsets_ids.to_list()
    assert ids.shape[0] == 1 and ids.dtype == tf.int32
    if strings != ["[CLS]"]:
        assert ids.flat_values.shape[0] == 0


def test_batch_of_zero(uncased_tokenizer):
    ids = uncased_tokenizer.tokenize(tf.constant([], tf.string))
    assert ids.shape[0] == 0 and ids.flat_values.shape[0] == 0
    assert uncased_tokenizer.tokenize_with_offsets(tf.constant([], tf.string))[0].shape[0] == 0


def test_very_long_line(uncased_tokenizer):
    word_line = ("hello world " * 8334)[:100_000]
    one_word = "a" * 100_000
    ids = uncased_tokenizer.tokenize(tf.constant([word_line, one_word]))
    assert ids[0].flat_values.shape[0] == len(word_line.split())
    assert ids[1].to_list() == [[uncased_tokenizer.unk_id]]


def test_special_ids_and_config(uncased_tokenizer, minilm_vocab):
    t = uncased_tokenizer
    assert (t.pad_id, t.unk_id, t.cls_id, t.sep_id, t.mask_id, t.vocab_size) == (
        0, 100, 101, 102, 103, 30522)
    clone = BertTokenizer.from_config(t.get_config())
    assert clone.vocab_file == minilm_vocab and clone.lower_case
    line = tf.constant(["Tokenizers agree."])
    assert clone.tokenize(line).to_list() == t.tokenize(line).to_list()


def test_non_batch_input_is_a_clear_error(uncased_tokenizer):
    for bad in (tf.constant("one line"), tf.constant([["a", "b"]])):
        with pytest.raises(ValueError, match="1-D tf.string tensor"):
            uncased_tokenizer.tokenize(bad)
