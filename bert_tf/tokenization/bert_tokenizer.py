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


def _as_batch(strings):
    strings = tf.convert_to_tensor(strings, tf.string)
    if strings.shape.rank is not None and strings.shape.rank != 1:
        raise ValueError(f"BertTokenizer takes a 1-D tf.string tensor [batch]; got shape "
                         f"{strings.shape}. Batch scalars with tf.expand_dims or ds.batch().")
    return strings


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenizer(keras.layers.Layer):
    """Splits text into WordPiece ids exactly as Hugging Face's BertTokenizerFast does.

    Runs fully in-graph (tf.data, tf.function, SavedModel) on tensorflow-text's
    FastWordpieceTokenizer; `normalization.py` says how and why normalisation differs from
    tensorflow-text's own. In-graph tokenization pays off in batches: call it on `[batch]` string
    tensors (e.g. after `ds.batch()`); one line at a time, Hugging Face `tokenizers` is faster.

    Args:
      vocab_file: google-research `vocab.txt`; only named in messages when `vocab` is given.
      lower_case: lower-case and strip accents (uncased models); a warning is logged when the
        vocab's casing disagrees.
      vocab: the vocab's tokens (index = id), when already read; the file is then not opened.

    Example:
    >>> tokenizer = BertTokenizer(vocab_file)  # doctest: +SKIP
    >>> tokenizer.tokenize(tf.constant(["Hello, world!"]))  # doctest: +SKIP
    <tf.RaggedTensor [[[7592], [1010], [2088], [999]]]>
    """

    def __init__(self, vocab_file, lower_case=True, vocab=None, **kwargs):
        super().__init__(**kwargs)
        self.vocab_file = None if vocab_file is None else os.fspath(vocab_file)
        self.lower_case = lower_case
        if vocab is None:
            vocab = vocab_lib.load_vocab(self.vocab_file)
        vocab_lib.check_case_matches_vocab(vocab, lower_case, self.vocab_file)
        self.vocab_size = len(vocab)
        ids = vocab_lib.special_token_ids(vocab)
        self.pad_id, self.unk_id, self.cls_id = ids.pad_id, ids.unk_id, ids.cls_id
        self.sep_id, self.mask_id = ids.sep_id, ids.mask_id
        # Special tokens typed in the text reach WordPiece as placeholder words, appended to the
        # vocab (ids >= vocab_size); `_id_map` maps those ids to the real ones.
        pieces = vocab + normalization.placeholder_tokens(lower_case)
        self._id_map = tf.constant(list(range(len(vocab))) + [
            ids.pad_id, ids.unk_id, ids.cls_id, ids.sep_id, ids.mask_id], tf.int32)
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
        strings = normalization.to_valid_utf8(_as_batch(strings))
        normalized = normalization.normalize(
            normalization.mark_special_tokens(strings), self.lower_case)
        pieces = self._wordpiece.tokenize(normalized)  # [B, (pieces)]
        # A word starts at every piece without the "##" prefix.
        starts_word = tf.cast(tf.logical_not(tf.gather(self._is_suffix, pieces.flat_values)),
                              tf.int64)
        word = tf.cumsum(starts_word) - 1  # [pieces]
        words_per_line = tf.math.unsorted_segment_sum(
            starts_word, pieces.value_rowids(), pieces.nrows())
        num_words = tf.reduce_sum(starts_word)
        ids, word = self._finish(pieces.flat_values, word, num_words)
        return tf.RaggedTensor.from_row_lengths(
            tf.RaggedTensor.from_value_rowids(ids, word, num_words, validate=False),
            words_per_line, validate=False)

    def tokenize_with_offsets(self, strings):
        """Like `tokenize`, plus int64 byte offsets `[B, (words), (pieces)]` into each input.

        Offsets are exact wherever normalisation keeps a word's byte length (ASCII, lower-casing
        within a script); elsewhere each piece gets the span of its whole word. This path splits
        words before normalising them and is slower than `tokenize`; the ids are the same.
        """
        words, raw, starts, ends = normalization.normalized_words(
            _as_batch(strings), self.lower_case)
        pieces, piece_starts, piece_ends = self._wordpiece.tokenize_with_offsets(
            words.flat_values)  # One row per word.
        word = pieces.value_rowids()
        exact = tf.gather(
            tf.strings.length(words.flat_values) == tf.strings.length(raw.flat_values), word)
        word_start = tf.gather(starts.flat_values, word)
        word_end = tf.gather(ends.flat_values, word)
        piece_starts = tf.where(exact, word_start + piece_starts.flat_values, word_start)
        piece_ends = tf.where(exact, word_start + piece_ends.flat_values, word_end)
        ids, word, piece_starts, piece_ends = self._finish(
            pieces.flat_values, word, pieces.nrows(), piece_starts, piece_ends)
        return tuple(words.with_flat_values(tf.RaggedTensor.from_value_rowids(
            t, word, pieces.nrows(), validate=False)) for t in (ids, piece_starts, piece_ends))

    def _finish(self, ids, word, num_words, *offsets):
        """Applies the reference's word limit and maps placeholder ids to special-token ids.

        Args:
          ids: int32 `[pieces]` ids in the placeholder-extended vocab.
          word: int64 `[pieces]` sorted index of each piece's word.
          num_words: scalar, number of words.
          *offsets: int64 `[pieces]` start and end offsets, or nothing.

        Returns:
          `(ids, word, *offsets)` with each word longer than MAX_CHARS_PER_WORD characters
          reduced to one [UNK] piece spanning the word.
        """
        num_chars = tf.math.unsorted_segment_sum(tf.gather(self._num_chars, ids), word, num_words)
        too_long = num_chars > normalization.MAX_CHARS_PER_WORD

        def drop_long_words():
            in_long_word = tf.gather(too_long, word)
            # Keep the first piece of each long word, as [UNK], ending where the word ends.
            is_first = tf.concat([[True], word[1:] != word[:-1]], axis=0)
            keep = tf.logical_or(tf.logical_not(in_long_word), is_first)
            kept = [tf.where(in_long_word, self.unk_id, ids), word]
            if offsets:
                starts, ends = offsets
                is_last = tf.concat([word[1:] != word[:-1], [True]], axis=0)
                word_end = tf.math.unsorted_segment_max(
                    tf.where(is_last, ends, 0), word, num_words)
                kept += [starts, tf.where(in_long_word, tf.gather(word_end, word), ends)]
            return tuple(tf.boolean_mask(t, keep) for t in kept)

        # Long words are rare: skip the filtering ops when there are none.
        kept = tf.cond(tf.reduce_any(too_long), drop_long_words, lambda: (ids, word, *offsets))
        return (tf.gather(self._id_map, kept[0]), *kept[1:])

    def build(self, input_shape):
        del input_shape  # Nothing to build: the vocab is read in __init__.

    def call(self, strings):
        return self.tokenize(strings)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, lower_case=self.lower_case)
        return config
