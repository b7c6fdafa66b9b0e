"""Raw-text `x` (and labels) for Keras `fit`/`evaluate`/`predict` -> a batched `tf.data` pipeline.

Accepted `x`: a list or 1-D numpy array of `str`; for text-pair models a tuple of two such
(`(texts_a, texts_b)`, keras-hub's convention); or a batched `tf.data.Dataset` whose elements
are `x` or `(x, y)` / `(x, y, sample_weight)` with `x` as above. Lists and arrays are checked
here, before any step runs (keras-hub checks nothing and fails inside the graph). Tokenization
runs in the pipeline, so the model itself takes ids and its training step is the plain Keras
one: `dataset.map` where batches are shuffled or grouped by length, a Python generator over
the traced preprocessor where lists are read in order (`evaluate`, `predict`,
`fit(shuffle=False)`; `_in_order`).

Example:
>>> dataset = text_dataset(preprocessor, ["a good film", "dull"], [1, 0], batch_size=32,
...                        text_pair=False, check_labels=lambda y: y)  # doctest: +SKIP
"""

import numpy as np
import tensorflow as tf

from bert_tf.data.autotune import without_autotune
from bert_tf.errors import UserError
from bert_tf.finetuning.length_bucketing import length_sorted_batches
from bert_tf.layers.traced_call import traced_call

DEFAULT_BATCH_SIZE = 32


class TaskInputError(UserError, ValueError):
    """Texts or labels given to a task model's `fit`, `evaluate` or `predict` are unusable."""


def _is_texts(value):
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.dtype.kind in "UOS"
    return isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value)


def _is_pair(x):
    return (isinstance(x, (list, tuple)) and len(x) == 2 and not isinstance(x[0], str)
            and not isinstance(x[1], str) and all(_is_texts(column) for column in x))


def _checked_column(column, where):
    texts = [item.decode("utf-8") if isinstance(item, bytes) else item for item in column]
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TaskInputError(f"{where}[{index}] is {type(text).__name__}, not a text.")
        if not text.strip():
            raise TaskInputError(f"{where}[{index}] is an empty text; drop it or give it words.")
    return np.asarray(texts, dtype=object)


def text_columns(x, text_pair, where="x"):
    """`x` as a tuple of one or two object arrays of non-empty texts.

    Raises:
      TaskInputError: one text instead of a list, a pair to a single-text model or single
        texts to a pair model, columns of unequal length, a non-text or an empty text (named
        by its index).
    """
    if isinstance(x, (str, bytes)):
        raise TaskInputError(f"`{where}` is one text; pass a list of texts, e.g. [{x!r}].")
    if _is_pair(x):
        if not text_pair:
            raise TaskInputError(
                f"`{where}` is a pair of text lists, but this model takes single texts; build it "
                "with text_pair=True for sentence-pair tasks.")
        if len(x[0]) != len(x[1]):
            raise TaskInputError(f"`{where}` pairs {len(x[0])} first texts with {len(x[1])} "
                                 "second texts; give both the same number.")
        return (_checked_column(x[0], f"{where}[0]"), _checked_column(x[1], f"{where}[1]"))
    if text_pair:
        raise TaskInputError(f"This model takes text pairs: pass `{where}=(texts_a, texts_b)`, "
                             "two lists of equal length.")
    if not _is_texts(x) and not isinstance(x, (list, np.ndarray)):
        raise TaskInputError(f"`{where}` must be a list or numpy array of texts; received "
                             f"{type(x).__name__}.")
    return (_checked_column(x, where),)


def _split_element(spec, text_pair):
    """(x spec, number of further entries) of a dataset element spec, checked."""
    def is_string(s):
        return isinstance(s, tf.TensorSpec) and s.dtype == tf.string

    if text_pair and isinstance(spec, tuple) and len(spec) == 2 and all(map(is_string, spec)):
        return spec, 0
    if is_string(spec) or (isinstance(spec, tuple) and len(spec) == 2
                           and all(map(is_string, spec))):
        x_spec, rest = spec, 0
    elif isinstance(spec, tuple) and 2 <= len(spec) <= 3:
        x_spec, rest = spec[0], len(spec) - 1
    else:
        raise TaskInputError("A dataset for this model must yield texts or (texts, labels[, "
                             f"sample_weight]); its elements are {spec}.")
    pair = isinstance(x_spec, tuple)
    if pair != text_pair or not all(map(is_string, x_spec if pair else (x_spec,))):
        wanted = "(texts_a, texts_b) string pairs" if text_pair else "a string tensor of texts"
        raise TaskInputError(f"This model's dataset texts must be {wanted}; they are {x_spec}.")
    if any(s.shape.rank != 1 for s in (x_spec if pair else (x_spec,))):
        raise TaskInputError(f"Dataset texts must come in batches of shape [B]; they are "
                             f"{x_spec}. Batch the dataset first, e.g. dataset.batch(32).")
    return x_spec, rest


def text_dataset(preprocessor, x, y=None, sample_weight=None, batch_size=None, shuffle=False,
                 text_pair=False, check_labels=None, check_label_spec=None, seed=None,
                 group_by_length=False):
    """A batched dataset of `(ids dict[, y[, sample_weight]])` from raw-text `x`.

    Args:
      preprocessor: a `BertPreprocessor` (its `padding` sets each batch's width).
      x, y, sample_weight: as Keras `fit` takes them; `x` raw text (module docstring).
      batch_size: for lists and arrays (default 32); a dataset must come batched.
      shuffle: shuffle lists and arrays every epoch (Keras `fit`'s default for arrays).
      text_pair: whether the model takes text pairs.
      check_labels: `y -> numpy labels`, raising `TaskInputError` on wrong type or range.
      check_label_spec: `TensorSpec -> None`, the same check for a dataset's labels.
      seed: shuffle seed.
      group_by_length: batch lists and arrays by WordPiece length within windows
        (`data.length_bucketing`, as the entry points' training batches), then shuffle the
        batches when `shuffle`: less padding, each text still once per epoch.

    Raises:
      TaskInputError: see `text_columns`; labels refused by `check_labels`; a dataset of other
        elements, `batch_size` or `group_by_length` with a dataset.
    """
    traced = traced_call(preprocessor)

    def preprocess(texts, *rest):
        return (traced(texts), *rest)

    if isinstance(x, tf.data.Dataset):
        if y is not None or sample_weight is not None:
            raise TaskInputError("With a dataset, labels come from the dataset: drop `y` and "
                                 "`sample_weight`.")
        if group_by_length:
            raise TaskInputError("group_by_length applies to lists and arrays; a dataset comes "
                                 "batched already (group it with bucket_by_sequence_length).")
        _, rest = _split_element(x.element_spec, text_pair)
        if rest and check_label_spec is not None:
            check_label_spec(x.element_spec[1])
        if text_pair and not rest:  # tf.data unpacks a pair element into two arguments
            return without_autotune(
                x.map(lambda *pair: preprocess(pair), num_parallel_calls=tf.data.AUTOTUNE))
        return without_autotune(x.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE))
    columns = text_columns(x, text_pair)
    size = len(columns[0])
    if not size:
        raise TaskInputError("`x` holds no texts.")
    extras = []
    for name, values in (("y", y), ("sample_weight", sample_weight)):
        if values is None:
            continue
        values = check_labels(values) if name == "y" else np.asarray(values, np.float32)
        if len(values) != size:
            raise TaskInputError(f"`{name}` has {len(values)} entries for {size} texts.")
        extras.append(values)
    if sample_weight is not None and y is None:
        raise TaskInputError("`sample_weight` needs labels `y`.")
    if not shuffle and not group_by_length:
        return _in_order(traced, columns, extras, batch_size or DEFAULT_BATCH_SIZE, text_pair)
    dataset = tf.data.Dataset.from_tensor_slices(
        (columns if text_pair else columns[0], *extras))
    if shuffle:
        dataset = dataset.shuffle(size, seed=seed)
    if group_by_length:
        def lengths(window):  # WordPieces per text (both texts of a pair)
            texts = window[0] if text_pair else (window[0],)
            return sum(preprocessor.tokenize(t).merge_dims(1, -1).row_lengths() for t in texts)

        dataset = length_sorted_batches(dataset, lengths, batch_size or DEFAULT_BATCH_SIZE,
                                        seed=(seed or 0) if shuffle else None, count=size)
    else:
        dataset = dataset.batch(batch_size or DEFAULT_BATCH_SIZE)
    return without_autotune(
        dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))


# Nothing for tf.data to rewrite in a generator, and its attempt logs a warning per iterator.
_AS_GIVEN = tf.data.Options()
_AS_GIVEN.experimental_optimization.apply_default_optimizations = False


def _in_order(pack, columns, extras, batch_size, text_pair):
    """`text_dataset` of in-memory texts read in order: each batch tokenized by `pack` (the
    traced preprocessor) in a Python generator, not by `dataset.map`.

    A mapped dataset instantiates and re-optimizes the preprocessor's ~600-op graph for each
    iterator (~0.16 s on 2 cores), and Keras makes two per `evaluate` or `predict` call (the
    second for an epoch that never comes): two sentences took 0.45 s to predict on
    MiniLM, 0.06-0.1 s this way. `pack` is instantiated once per process; the prefetch
    keeps tokenization beside the model's step as `map` did.
    """
    size = len(columns[0])

    def batches():
        for start in range(0, size, batch_size):
            texts = [tf.constant(column[start:start + batch_size].tolist(), tf.string)
                     for column in columns]
            ids = pack(tuple(texts) if text_pair else texts[0])
            rest = tuple(values[start:start + batch_size] for values in extras)
            yield (ids, *rest) if extras else ids  # ids alone: what Keras `predict` takes

    text_spec = tf.TensorSpec([None], tf.string)
    ids_spec = tf.nest.map_structure(
        lambda spec: tf.TensorSpec([None, None], spec.dtype),
        pack.get_concrete_function((text_spec,) * 2 if text_pair else text_spec)
        .structured_outputs)
    extras_spec = tuple(tf.TensorSpec([None, *values.shape[1:]], tf.as_dtype(values.dtype))
                        for values in extras)
    dataset = tf.data.Dataset.from_generator(
        batches, output_signature=(ids_spec, *extras_spec) if extras else ids_spec)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(-(-size // batch_size)))
    return without_autotune(dataset.prefetch(1).with_options(_AS_GIVEN))
