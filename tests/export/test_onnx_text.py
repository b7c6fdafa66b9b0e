"""Strings in: the tokenizer op against bert_tf's ids; MiniLM's embeddings in one call."""

import numpy as np
import pytest

from bert_tf.export import onnx_text
from bert_tf.export.onnx_export import export_onnx
from bert_tf.keras_tasks import SentenceEncoder
from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.tokenization.vocab import load_vocab
from tests.export.test_tflite import bbc_lines
from tests.fixtures import minilm_vocab_file
from tests.tokenization.reference_data import CASED_VOCAB, read_jsonl, row_bytes

ort = pytest.importorskip("onnxruntime", reason="the onnx extra (pip install bert_tf[onnx])")
extensions = pytest.importorskip("onnxruntime_extensions",
                                 reason="the onnx extra (pip install bert_tf[onnx])")


def session_of(model):
    options = ort.SessionOptions()
    options.register_custom_ops_library(extensions.get_library_path())
    return ort.InferenceSession(model if isinstance(model, str) else model.SerializeToString(),
                                options)


def piece_ids(session, texts):
    """The pieces of each text (without [CLS] and [SEP]), batch by batch."""
    ids, mask = session.run(None, {"text": np.array(texts, dtype=object)})
    return [row[1:length - 1].tolist() for row, length in zip(ids, mask.sum(-1))]


@pytest.mark.parametrize("vocab_file, lower_case, column, differing", [
    (None, True, "uncased_ids", 26), (CASED_VOCAB, False, "cased_ids", 23)])
def test_the_op_gives_the_reference_ids_but_on_edge_cases(vocab_file, lower_case, column,
                                                          differing):
    """The google-research reference's ids (tests/testdata/tokenization, what bert_tf's
    tokenizer gives) against the op's, line by line; the op takes Python strings, so the 7
    lines that are not UTF-8 are left out."""
    tokens = load_vocab(vocab_file or minilm_vocab_file())
    session = session_of(onnx_text.tokenizer_model(tokens, lower_case, 100_000, 18))
    rows = [row for row in read_jsonl("reference_ids.jsonl.xz") if column in row]
    texts = []
    for row in rows:
        try:
            texts.append((row_bytes(row).decode("utf-8"), row[column]))
        except UnicodeDecodeError:
            continue
    assert len(texts) == len(rows) - 7
    different = [text for text, ids in texts if piece_ids(session, [text])[0] != ids]
    # Typed special tokens ("[CLS]" is split as text), control characters (U+0000 ends the
    # text), U+FFFD, U+2028, Hangul (no NFD), some capitals (Greek, Turkish İ, Kelvin sign)
    # and accents on combining marks: docs/design.md, "ONNX".
    assert len(different) == differing, different
    lines = bbc_lines(200)  # ordinary text: every id equal, in batches
    ours = sum((piece_ids(session, lines[i:i + 32]) for i in range(0, len(lines), 32)), [])
    expected = BertTokenizer(vocab_file or minilm_vocab_file(), lower_case=lower_case)
    assert ours == expected.tokenize(lines).merge_dims(1, 2).to_list()


def test_truncation_at_seq_length_and_batches_of_any_lengths():
    session = session_of(onnx_text.tokenizer_model(load_vocab(CASED_VOCAB), False, 8, 18))
    ids, mask = session.run(None, {"text": np.array(["a b c d e f g h i j", "a", ""],
                                                    dtype=object)})
    assert ids.shape == mask.shape == (3, 8)  # the longest row: [CLS] 6 pieces [SEP]
    assert mask.sum(-1).tolist() == [8, 3, 2]
    vocab = load_vocab(CASED_VOCAB)
    assert [vocab[i] for i in ids[0]] == ["[CLS]", "a", "b", "c", "d", "e", "f", "[SEP]"]
    assert ids[1, 3:].tolist() == [0] * 5 and ids[2, 2:].tolist() == [0] * 6


@pytest.mark.minilm
def test_minilm_strings_in_embedding_out_equals_the_sentence_encoder(minilm_hf_dir, tmp_path):
    """all-MiniLM-L6-v2's folder: its pooling (mean) and Normalize inside, one call a request."""
    export = export_onnx(minilm_hf_dir, str(tmp_path / "onnx"), text_input=True)
    assert (export.head, export.inputs, export.outputs) == (
        "sentence_encoder", ["text"], ["embedding"])
    texts = bbc_lines(24) + ["word " * 300]  # the last: truncated at the folder's 256
    (embedding,) = session_of(export.path).run(None, {"text": np.array(texts, dtype=object)})
    expected = SentenceEncoder.from_pretrained(minilm_hf_dir).predict(texts, verbose=0)
    np.testing.assert_allclose(embedding, expected, atol=1e-4)
