"""BERT preprocessing in-graph: raw text (one segment or a pair) -> the three encoder inputs."""

import contextlib
import os
import shutil
import tempfile

import keras
import tensorflow as tf
import tensorflow_text as text

from bert_tf.tokenization import bert_tokenizer
from bert_tf.tokenization import vocab as vocab_lib

VOCAB_ASSET = "vocab.txt"  # the vocab's name among a `.keras` file's assets

# How `BertPreprocessor` chooses the width of a batch (see its docstring).
PADDINGS = ("fixed", "longest", "buckets")
# "longest" rounds up to a multiple of this: matmul tiles (GPU tensor cores take multiples of 8).
PAD_TO_MULTIPLE_OF = 8


def default_bucket_lengths(seq_length):
    """Powers of two from 16 below `seq_length`, then `seq_length`: 128 -> (16, 32, 64, 128)."""
    lengths = [n for n in (16, 32, 64, 128, 256, 512, 1024, 2048) if n < seq_length]
    return tuple(lengths) + (seq_length,)


def padded_width(lengths, seq_length, padding="fixed", bucket_lengths=None):
    """The width a batch of packed sequences is padded to.

    Args:
      lengths: int `[B]`, packed lengths (with [CLS]/[SEP]), each at most `seq_length`.
      seq_length: the cap (and the width of "fixed").
      padding: one of `PADDINGS`.
      bucket_lengths: increasing widths for "buckets", the last one `seq_length`.

    Returns:
      `seq_length` as a Python int ("fixed": the shape stays static); an int32 scalar: the longest
      length rounded up to a multiple of `PAD_TO_MULTIPLE_OF`, at most `seq_length` ("longest"); the
      smallest bucket length that holds the longest ("buckets"). An empty batch gets the smallest
      width.
    """
    if padding == "fixed":
        return seq_length
    longest = tf.reduce_max(tf.concat([tf.cast(lengths, tf.int32), [1]], axis=0))
    if padding == "longest":
        rounded = -(-longest // PAD_TO_MULTIPLE_OF) * PAD_TO_MULTIPLE_OF
        return tf.minimum(rounded, seq_length)
    buckets = tf.constant(bucket_lengths, tf.int32)
    return tf.reduce_min(tf.where(buckets >= longest, buckets, seq_length))


def truncate_seq_pair_lengths(len_a, len_b, max_length):
    """Segment lengths after google-research's `truncate_seq_pair`, in closed form.

    The reference drops the last token of the longer segment until the pair fits, from B on ties,
    so when both must be cut A keeps ceil(max_length / 2). (tensorflow-text's
    ShrinkLongestTrimmer and Hugging Face's "longest_first" give B the extra token instead, hence
    hand-written; plain TF ops, so TF Serving has them.)

    Args:
      len_a, len_b: int `[B]` segment lengths.
      max_length: int, tokens the pair may keep in total.

    Returns:
      `(new_len_a, new_len_b)`, int `[B]`.
    """
    half = (max_length + 1) // 2
    fits = len_a + len_b <= max_length
    cut_a = tf.minimum(len_a, tf.maximum(max_length - len_b, half))
    new_a = tf.where(fits, len_a, cut_a)
    return new_a, tf.where(fits, len_b, max_length - new_a)


def _keep_first(ids, lengths):
    """Keeps the first `lengths[i]` values of each row of ragged `ids` `[B, (pieces)]`."""
    rows = ids.value_rowids()
    position = tf.range(tf.size(ids.values, tf.int64)) - tf.gather(ids.row_starts(), rows)
    keep = position < tf.gather(tf.cast(lengths, tf.int64), rows)
    return tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(ids.values, keep), tf.boolean_mask(rows, keep), nrows=ids.nrows(),
        validate=False)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
    """Tokenizes and packs text into `input_word_ids`, `input_mask`, `input_type_ids`.

    `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, pairs truncated longest-first like
    google-research's `truncate_seq_pair` to at most `seq_length` tokens, padded with [PAD].
    Exposes TF Hub's preprocess API (`tokenize`, `bert_pack_inputs`) and runs in `tf.data`,
    `tf.function` and SavedModels (only ops that TF Serving 2.12+ links).

    Padding (the width of a batch; the encoder's outputs at real positions do not depend on it):
    - "fixed" (default): every batch is `seq_length` wide. One shape: what TPUs need (XLA
      compiles one program per shape, and a TPU loop takes static shapes only).
    - "longest": the batch's longest sequence rounded up to a multiple of 8, at most
      `seq_length`. Least padding; up to `seq_length / 8` shapes, so for eager/graph CPU and GPU
      runs, not XLA (each new shape recompiles).
    - "buckets": the smallest of `bucket_lengths` that holds the batch's longest sequence
      (default 16, 32, 64, ..., `seq_length`): a few shapes, each compiled once, for XLA
      (`jit_compile`) on GPUs. Real text (median ~24 WordPieces) mostly lands in 32 or 64.

    A `.keras` file of a model holding it stores the vocab as an asset (`save_assets`), as
    keras-hub does, so loading does not need `vocab_file` to be where it was.

    Args:
      vocab_file: google-research `vocab.txt`; None once `load_assets` has read the vocab from
        a `.keras` file (it is then held in memory; `vocab_path()` writes it out).
      lower_case: uncased model (lower-case + strip accents).
      seq_length: the longest packed sequence, and the width of "fixed".
      padding: "fixed", "longest" or "buckets".
      bucket_lengths: increasing widths for "buckets", ending at `seq_length`; defaults to
        `default_bucket_lengths(seq_length)`.

    Example:
    >>> preprocessor = BertPreprocessor(vocab_file, seq_length=8)  # doctest: +SKIP
    >>> preprocessor((tf.constant(["Hello world"]), tf.constant(["Hi"])))["input_word_ids"]
    ... # doctest: +SKIP
    <tf.Tensor: shape=(1, 8), dtype=int32, numpy=array([[101, 7592, 2088, 102, 7632, 102, 0, 0]])>
    """

    def __init__(self, vocab_file, lower_case=True, seq_length=128, padding="fixed",
                 bucket_lengths=None, **kwargs):
        super().__init__(**kwargs)
        if seq_length < 2:
            raise ValueError(f"seq_length must be at least 2 ([CLS] and [SEP]); got {seq_length}.")
        if padding not in PADDINGS:
            raise ValueError(f"padding must be one of {PADDINGS}; got {padding!r}.")
        bucket_lengths = tuple(bucket_lengths or default_bucket_lengths(seq_length))
        if list(bucket_lengths) != sorted(set(bucket_lengths)) or bucket_lengths[-1] != seq_length:
            raise ValueError(f"bucket_lengths must increase and end at seq_length={seq_length}; "
                             f"got {bucket_lengths}.")
        self.vocab_file = vocab_file
        self._vocab_bytes = None  # the vocab, when `load_assets` read it from a `.keras` file
        self.lower_case = lower_case
        self.seq_length = seq_length
        self.padding = padding
        self.bucket_lengths = bucket_lengths
        self.tokenizer = (None if vocab_file is None
                          else bert_tokenizer.BertTokenizer(vocab_file, lower_case=lower_case))

    def tokenize(self, strings):
        """WordPiece ids of tf.string `[B]`: int32 ragged `[B, (words), (pieces)]`."""
        return self.tokenizer.tokenize(strings)

    def bert_pack_inputs(self, segments, seq_length=None):
        """Truncates, adds [CLS]/[SEP], and pads one or two tokenized segments.

        Args:
          segments: list of one or two ragged int ids, `[B, (words), (pieces)]` or
            `[B, (pieces)]`, as from `tokenize`.
          seq_length: the longest packed sequence; defaults to the constructor's. With
            padding "fixed" it is the output width; "buckets" then uses
            `default_bucket_lengths(seq_length)` unless it equals the constructor's.

        Returns:
          dict of int32 `[B, W]`, W the padded width (see the class docstring): `input_word_ids`,
          `input_mask` (1 on real tokens), `input_type_ids` (0 for [CLS] A [SEP], 1 for B [SEP]).

        Raises:
          ValueError: not one or two segments, or `seq_length` too short for their separators.
        """
        seq_length = self.seq_length if seq_length is None else seq_length
        segments = [s.merge_dims(1, -1) if s.ragged_rank > 1 else s for s in segments]
        segments = [tf.cast(s, tf.int32) for s in segments]
        if len(segments) == 1:
            if seq_length < 2:
                raise ValueError(f"seq_length={seq_length} leaves no room for [CLS] and [SEP].")
            # Slicing, not ShrinkLongestTrimmer: on one segment inside tf.function that fails
            # (while_loop shape invariant).
            segments = [segments[0][:, :seq_length - 2]]
        elif len(segments) == 2:
            if seq_length < 3:
                raise ValueError(
                    f"seq_length={seq_length} leaves no room for [CLS] A [SEP] B [SEP].")
            len_a, len_b = truncate_seq_pair_lengths(
                segments[0].row_lengths(), segments[1].row_lengths(), seq_length - 3)
            segments = [_keep_first(segments[0], len_a), _keep_first(segments[1], len_b)]
        else:
            raise ValueError(f"bert_pack_inputs takes 1 or 2 segments; got {len(segments)}.")
        ids, type_ids = text.combine_segments(
            segments, start_of_sequence_id=self.tokenizer.cls_id,
            end_of_segment_id=self.tokenizer.sep_id)
        buckets = (self.bucket_lengths if seq_length == self.seq_length
                   else default_bucket_lengths(seq_length))
        width = padded_width(ids.row_lengths(), seq_length, self.padding, buckets)
        word_ids, mask = text.pad_model_inputs(ids, width, pad_value=self.tokenizer.pad_id)
        type_ids, _ = text.pad_model_inputs(type_ids, width, pad_value=0)
        return {"input_word_ids": tf.cast(word_ids, tf.int32),
                "input_mask": tf.cast(mask, tf.int32),
                "input_type_ids": tf.cast(type_ids, tf.int32)}

    def build(self, input_shape):
        del input_shape  # Nothing to build: the vocab is read in __init__.

    def call(self, inputs):
        """`inputs`: tf.string `[B]`, or a tuple/list of two (text_a, text_b)."""
        if not isinstance(inputs, (tuple, list)):
            return self.bert_pack_inputs([self.tokenize(inputs)])
        if len(inputs) != 2:
            raise ValueError(f"BertPreprocessor takes 1 or 2 segments; got {len(inputs)}.")
        # One tokenizer pass over both segments: half the graph, fewer kernel launches.
        text_a, text_b = (tf.convert_to_tensor(t, tf.string) for t in inputs)
        ids = self.tokenize(tf.concat([text_a, text_b], axis=0))
        size_a = tf.shape(text_a, out_type=tf.int64)[0]
        return self.bert_pack_inputs([ids[:size_a], ids[size_a:]])

    @contextlib.contextmanager
    def vocab_path(self):
        """Yields a path of the vocab file for code that reads one: `vocab_file`, or (vocab
        loaded from a `.keras` file) a temporary copy of the stored bytes, removed on exit."""
        if self._vocab_bytes is None:
            yield self.vocab_file
            return
        with tempfile.TemporaryDirectory(prefix="bert_tf_vocab_") as folder:
            path = os.path.join(folder, VOCAB_ASSET)
            with open(path, "wb") as f:
                f.write(self._vocab_bytes)
            yield path

    def save_assets(self, dir_path):
        with self.vocab_path() as vocab_file:
            shutil.copyfile(vocab_file, os.path.join(dir_path, VOCAB_ASSET))

    def load_assets(self, dir_path):
        # Keras deletes `dir_path` after loading. FastWordpieceTokenizer builds its table from
        # the tokens in memory, so the vocab is kept as bytes (written out by `vocab_path` for
        # a model directory or fill-mask) and no file is left behind.
        asset = os.path.join(dir_path, VOCAB_ASSET)
        with open(asset, "rb") as f:
            self._vocab_bytes = f.read()
        self.vocab_file = None
        # Keras locks a built layer's sub-layers; it unlocks the same way to untrack variables.
        locked = self._tracker.locked
        self._tracker.unlock()
        self.tokenizer = bert_tokenizer.BertTokenizer(
            asset, lower_case=self.lower_case, vocab=vocab_lib.load_vocab(asset))
        if locked:
            self._tracker.lock()

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("vocab_file") and not tf.io.gfile.exists(config["vocab_file"]):
            config["vocab_file"] = None  # moved since saving: `load_assets` brings the stored one
        return cls(**config)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, lower_case=self.lower_case,
                      seq_length=self.seq_length, padding=self.padding,
                      bucket_lengths=list(self.bucket_lengths))
        return config

