"""BertPreprocessor: reference packing and truncation, invariants, tf.data and SavedModel."""

import itertools
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tokenization.bert_preprocessor import BertPreprocessor, truncate_seq_pair_lengths
from tests.tokenization.reference_data import CASED_VOCAB, read_jsonl, row_bytes

KEYS = ("input_word_ids", "input_mask", "input_type_ids")


def _truncate_seq_pair(len_a, len_b, max_length):
    """google-research/bert's loop, on lengths: pop from the longer segment, from B on ties."""
    while len_a + len_b > max_length:
        if len_a > len_b:
            len_a -= 1
        else:
            len_b -= 1
    return len_a, len_b


@pytest.fixture(scope="module")
def preprocessor(minilm_vocab):
    return BertPreprocessor(minilm_vocab, lower_case=True, seq_length=16)


def test_closed_form_truncation_equals_the_reference_loop():
    cases = list(itertools.product(range(13), range(13), range(16)))
    len_a, len_b, max_length = (tf.constant(c, tf.int64) for c in zip(*cases))
    got_a, got_b = truncate_seq_pair_lengths(len_a, len_b, max_length)
    expected = [_truncate_seq_pair(*c) for c in cases]
    assert list(zip(got_a.numpy().tolist(), got_b.numpy().tolist())) == expected


def test_pairs_equal_reference(preprocessor):
    rows = read_jsonl("reference_pairs.jsonl.xz")
    assert len(rows) >= 200
    for seq_length in sorted({r["seq_length"] for r in rows}):
        batch = [r for r in rows if r["seq_length"] == seq_length]
        segments = [preprocessor.tokenize(tf.constant([r[k] for r in batch])) for k in "ab"]
        out = preprocessor.bert_pack_inputs(segments, seq_length=seq_length)
        for row, ids in zip(batch, out["input_word_ids"].numpy().tolist()):
            expected = row["input_ids"] + [0] * (seq_length - len(row["input_ids"]))
            assert ids == expected, (row["a"], row["b"], seq_length)


def test_single_segments_equal_reference(preprocessor, reference_rows):
    out = preprocessor(tf.constant([row_bytes(r) for r in reference_rows]))
    for row, ids in zip(reference_rows, out["input_word_ids"].numpy().tolist()):
        expected = [101] + row["uncased_ids"][:14] + [102]
        assert ids == expected + [0] * (16 - len(expected)), row_bytes(row)[:60]


def _check_invariants(out, seq_length, num_segments, pad_id=0, cls_id=101, sep_id=102):
    ids, mask, types = (out[k].numpy() for k in KEYS)
    assert ids.shape == mask.shape == types.shape == (ids.shape[0], seq_length)
    assert all(out[k].dtype == tf.int32 for k in KEYS)
    for row_ids, row_mask, row_types in zip(ids, mask, types):
        length = int(row_mask.sum())
        assert row_mask.tolist() == [1] * length + [0] * (seq_length - length)
        assert (row_ids[length:] == pad_id).all() and (row_ids[:length] != pad_id).all()
        assert row_ids[0] == cls_id and row_ids[length - 1] == sep_id
        seps = np.flatnonzero(row_ids[:length] == sep_id)
        assert len(seps) >= num_segments
        first_end = seps[0] if num_segments == 1 else seps[-2]
        expected_types = [0] * (first_end + 1) + [1] * (length - first_end - 1)
        assert row_types.tolist() == expected_types + [0] * (seq_length - length)


@pytest.mark.parametrize("seq_length", [2, 3, 5, 16, 64])
def test_invariants_on_real_lines(preprocessor, reference_rows, seq_length):
    rng = random.Random(seq_length)
    # Typed "[PAD]"/"[SEP]" are real ids in the reference too; leave them out of the invariants.
    rows = rng.sample([r for r in reference_rows if b"[PAD]" not in row_bytes(r)
                       and b"[SEP]" not in row_bytes(r)], 200)
    a = tf.constant([row_bytes(r) for r in rows[:100]])
    b = tf.constant([row_bytes(r) for r in rows[100:]])
    single = preprocessor.bert_pack_inputs([preprocessor.tokenize(a)], seq_length=seq_length)
    _check_invariants(single, seq_length, 1)
    if seq_length < 3:
        return
    out = preprocessor.bert_pack_inputs(
        [preprocessor.tokenize(a), preprocessor.tokenize(b)], seq_length=seq_length)
    _check_invariants(out, seq_length, 2)
    types, mask = out["input_type_ids"].numpy(), out["input_mask"].numpy()
    for i in range(100):
        len_a = len(rows[i]["uncased_ids"])
        len_b = len(rows[100 + i]["uncased_ids"])
        kept_b = int(types[i].sum()) - 1
        kept_a = int(mask[i].sum()) - 3 - kept_b
        assert (kept_a, kept_b) == _truncate_seq_pair(len_a, len_b, seq_length - 3)
        # Truncation never empties a segment while the other is longer.
        if len_a and kept_a == 0:
            assert kept_b <= kept_a + 1
        if len_b and kept_b == 0:
            assert kept_a <= kept_b


def test_bad_input_gives_valid_output(preprocessor):
    weird = tf.constant(["", " \t ", "\x00\x01", b"\xff\xfe", "x" * 100_000])
    _check_invariants(preprocessor(weird), 16, 1)
    _check_invariants(preprocessor((weird, weird[::-1])), 16, 2)
    empty = preprocessor((tf.constant([], tf.string), tf.constant([], tf.string)))
    assert all(empty[k].shape == (0, 16) for k in KEYS)


def test_bad_arguments_are_clear(preprocessor, minilm_vocab):
    with pytest.raises(ValueError, match="1 or 2 segments; got 3"):
        preprocessor((tf.constant(["a"]),) * 3)
    with pytest.raises(ValueError, match="1 or 2 segments; got 3"):
        preprocessor.bert_pack_inputs([preprocessor.tokenize(tf.constant(["a"]))] * 3)
    with pytest.raises(ValueError, match="seq_length=2 leaves no room"):
        preprocessor.bert_pack_inputs([preprocessor.tokenize(tf.constant(["a"]))] * 2, seq_length=2)
    with pytest.raises(ValueError, match="seq_length must be at least 2"):
        BertPreprocessor(minilm_vocab, seq_length=1)


@pytest.mark.slow
def test_tf_data_tf_function_and_saved_model_agree(tmp_path):
    preprocessor = BertPreprocessor(CASED_VOCAB, lower_case=False, seq_length=12)
    a = ["Hello BBC World.", "", "Labour film music [SEP] x", "Ünïcödé\u200b text"]
    b = ["Goal!", "only b", "a much longer second segment than the first one is", ""]
    eager = preprocessor((tf.constant(a), tf.constant(b)))

    ds = tf.data.Dataset.from_tensor_slices((a, b)).batch(4).map(lambda x, y: preprocessor((x, y)))
    from_dataset = next(iter(ds))

    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.preprocessor = preprocessor

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
        def pair(self, x, y):
            return self.preprocessor((x, y))

    # Saving traces the tf.function; the loaded one runs that graph.
    tf.saved_model.save(Module(), str(tmp_path))
    from_saved_model = tf.saved_model.load(str(tmp_path)).pair(tf.constant(a), tf.constant(b))
    for out in (from_dataset, from_saved_model):
        for key in KEYS:
            np.testing.assert_array_equal(out[key].numpy(), eager[key].numpy())
    _check_invariants(eager, 12, 2, cls_id=preprocessor.tokenizer.cls_id,
                      sep_id=preprocessor.tokenizer.sep_id)


def test_config_round_trip(preprocessor, minilm_vocab):
    clone = BertPreprocessor.from_config(preprocessor.get_config())
    assert (clone.vocab_file, clone.lower_case, clone.seq_length) == (minilm_vocab, True, 16)
