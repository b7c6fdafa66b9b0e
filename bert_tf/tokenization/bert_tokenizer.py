"""In-graph BERT WordPiece tokenizer with the reference tokenizer's ids."""

import os

import keras
import tensorflow as tf
import tensorflow_text as text

from bert_tf.tokenization import normalization
from bert_tf.tokenization import vocab as vocab_lib

# FastWordpieceTokenizer's word limit counts bytes; the reference's counts characters (at most 4
# bytes each), so the byte limit only has to be loose enough and characters are counted here.
_MAX_BYTES_PER_WORD = 4 * normalization.MAX_CHARS_PER_WORD


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenizer(keras.layers.Layer):
    """Splits text into WordPiece ids exactly as Hugging Face's BertTokenizerFast does.

    Runs fully in-graph (tf.data, tf.function, SavedModel) on tensorflow-text's
    FastWordpieceTokenizer; `normalization.py` says how and why normalisation differs from
    tensorflow-text's own. In-graph tokenization pays off in batches: call it on `[batch]` string
    tensors (e.g. after `ds.batch()`); one line at a time, Hugging Face `tokenizers` is faster.

    Args:
      vocab_file: google-research `vocab.txt`.
      lower_case: lower-case and strip accents (uncased models); a warning is logged when the
        vocab's casing disagrees.

    Example:
    >>> tokenizer = BertTokenizer(vocab_file)  # doctest: +SKIP
    >>> tokenizer.tokenize(tf.constant(["Hello, world!"]))  # doctest: +SKIP
    <tf.RaggedTensor [[[7592], [1010], [2088], [999]]]>
    """

    def __init__(self, vocab_file, lower_case=True, **kwargs):
        super().__init__(**kwargs)
        self.vocab_file = os.fspath(vocab_file)
        self.lower_case = lower_case
        vocab = vocab_lib.load_vocab(self.vocab_file)
        vocab_lib.check_case_matches_vocab(vocab, lower_case, self.vocab_file)
        self.vocab_size = len(vocab)
        ids = vocab_lib.special_token_ids(vocab)
        self.pad_id, self.unk_id, self.cls_id = ids.pad_id, ids.unk_id, ids.cls_id
        self.sep_id, self.mask_id = ids.sep_id, ids.mask_id
        # Special tokens typed in the text reach WordPiece as placeholder words, appended to the
        # vocab so that they map to ids >= vocab_size; `_finish` turns those into the real ids.
        placeholders = normalization.placeholder_tokens(lower_case)
        self._placeholder_ids = tf.constant(
            [ids.pad_id, ids.unk_id, ids.cls_id, ids.sep_id, ids.mask_id], tf.int32)
        self._unk_placeholder = placeholders[1]
        pieces = vocab + placeholders
        self._is_suffix = tf.constant([p.startswith("##") for p in pieces])
        self._num_chars = tf.constant(
            [len(p) - 2 if p.startswith("##") else len(p) for p in pieces], tf.int32)
        # End-to-end mode: its own split on whitespace, punctuation and CJK is the reference's.
        self._wordpiece = text.FastWordpieceTokenizer(
            vocab=pieces, suffix_indicator="##", max_bytes_per_word=_MAX_BYTES_PER_WORD,
            token_out_type=tf.int32, unknown_token=vocab_lib.UNK, no_pretokenization=False,
            support_detokenization=False)

    def tokenize(self, strings):
        """Tokenizes `strings` (tf.string `[B]`) into int32 ids, ragged `[B, (words), (pieces)]`."""
        strings = normalization.to_valid_utf8(tf.convert_to_tensor(strings, tf.string))
        normalized = normalization.normalize(
            normalization.mark_special_tokens(strings), self.lower_case)
        pieces = self._wordpiece.tokenize(normalized)  # [B, (pieces)]
        # A word starts at every piece without the "##" prefix.
        starts_word = tf.logical_not(tf.gather(self._is_suffix, pieces.flat_values))
        words = tf.RaggedTensor.from_row_starts(
            pieces.flat_values, tf.where(starts_word)[:, 0], validate=False)
        words_per_line = tf.reduce_sum(
            tf.cast(pieces.with_flat_values(starts_word), tf.int64), axis=1)
        return self._finish(tf.RaggedTensor.from_row_lengths(words, words_per_line, validate=False))[0]

    def tokenize_with_offsets(self, strings):
        """Like `tokenize`, plus int64 byte offsets `[B, (words), (pieces)]` into each input.

        Offsets are exact wherever normalisation keeps a word's byte length (ASCII, lower-casing
        within a script); elsewhere each piece gets the span of its whole word. This path splits
        words before normalising them and is slower than `tokenize`; the ids are the same.
        """
        words, raw, starts, ends = normalization.normalized_words(
            tf.convert_to_tensor(strings, tf.string), self.lower_case)
        ids, piece_starts, piece_ends = self._wordpiece.tokenize_with_offsets(words.flat_values)
        # One row of `ids` per word: give its pieces input offsets.
        word = ids.value_rowids()
        exact = tf.gather(
            tf.strings.length(words.flat_values) == tf.strings.length(raw.flat_values), word)
        word_start = tf.gather(starts.flat_values, word)
        word_end = tf.gather(ends.flat_values, word)
        piece_starts = tf.where(exact, word_start + piece_starts.flat_values, word_start)
        piece_ends = tf.where(exact, word_start + piece_ends.flat_values, word_end)
        return self._finish(words.with_flat_values(ids), piece_starts, piece_ends)

    def _finish(self, ids, *offsets):
        """Applies the reference's word limit and maps placeholder ids to special-token ids.

        Args:
          ids: ragged `[B, (words), (pieces)]` ids in the placeholder-extended vocab.
          *offsets: flat int64 `[pieces]` start and end offsets, or nothing.

        Returns:
          `(ids, *offsets)` as ragged `[B, (words), (pieces)]`.
        """
        pieces = ids.values  # [words, (pieces)]
        flat = pieces.flat_values
        word = pieces.value_rowids()
        # A word longer than MAX_CHARS_PER_WORD characters becomes one [UNK] spanning the word.
        num_chars = tf.math.segment_sum(tf.gather(self._num_chars, flat), word)
        in_long_word = tf.gather(num_chars > normalization.MAX_CHARS_PER_WORD, word)
        is_first = tf.range(tf.size(flat, tf.int64)) == tf.gather(pieces.row_starts(), word)
        keep = tf.logical_or(tf.logical_not(in_long_word), is_first)
        flat = tf.where(in_long_word, self.unk_id, flat)
        flat = tf.where(flat >= self.vocab_size,
                        tf.gather(self._placeholder_ids, tf.maximum(flat - self.vocab_size, 0)),
                        flat)
        if offsets:
            last = tf.gather(pieces.row_limits() - 1, word)
            starts, ends = offsets
            offsets = (starts, tf.where(in_long_word, tf.gather(ends, last), ends))
        nrows = pieces.nrows()
        return tuple(
            ids.with_values(tf.RaggedTensor.from_value_rowids(
                tf.boolean_mask(t, keep), tf.boolean_mask(word, keep), nrows=nrows, validate=False))
            for t in (flat, *offsets))

    def build(self, input_shape):
        del input_shape  # Nothing to build: the vocab is read in __init__.

    def call(self, strings):
        return self.tokenize(strings)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, lower_case=self.lower_case)
        return config
