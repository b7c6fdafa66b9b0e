"""Batches of similar length for fine-tuning: sort within a shuffle window, trim to the batch.

Padding a batch to its own longest sequence (`BertPreprocessor(padding="longest")`) saves little
when one long sentence sits among short ones; sorting first makes the lengths in a batch alike.
Sorting the whole set would make every epoch run short batches first, so only windows of
`window_batches` batches are sorted, and the batches are shuffled again afterwards: the order
of training stays random across lengths, and each example is still seen once per epoch.

Example:
>>> batches = length_sorted_batches(examples, lambda e: e["length"], batch_size=32, seed=0)
... # doctest: +SKIP
"""

import tensorflow as tf

from bert_tf.tokenization.bert_preprocessor import default_bucket_lengths, padded_width

# Batches sorted together. 64 batches of 32 sentences: a window of 2,048 sentences sorts
# into batches whose lengths differ by a few tokens on real text.
WINDOW_BATCHES = 64


def length_sorted_batches(dataset, length_fn, batch_size, window_batches=WINDOW_BATCHES,
                          drop_remainder=False, seed=None, count=None):
    """Batches `dataset` (of single elements) so that each batch holds elements of like length.

    Args:
      dataset: `tf.data.Dataset` of single (unbatched) elements, already shuffled for training.
      length_fn: maps a batch of elements (the same structure, each tensor with a leading
        window axis; a tuple element is passed whole) to int `[window]` lengths; it runs once
        per window, so it can tokenize.
      batch_size: elements per batch.
      window_batches: batches per sorted window.
      drop_remainder: drop each window's last, partial batch (training takes whole batches).
      seed: None keeps the windows' sorted order (each window from shortest to longest); an int
        shuffles the batches within a buffer of `window_batches` batches, seeded, reshuffled
        each iteration.
      count: the number of elements of a finite `dataset`, if known: the batches then carry
        their cardinality, which `flat_map` loses (Keras's `fit` then knows its steps instead
        of running into the end of the data).

    Returns:
      A dataset of batches (the elements' structure with a leading batch axis).
    """
    # `map` unpacks tuple elements into arguments; a one-element tuple must stay a tuple.
    is_tuple = isinstance(dataset.element_spec, tuple)

    def sort(*elements):
        elements = elements if is_tuple else elements[0]
        order = tf.argsort(length_fn(elements), stable=True)
        return tf.nest.map_structure(lambda t: tf.gather(t, order), elements)

    def cut(*elements):
        elements = elements if is_tuple else elements[0]
        return tf.data.Dataset.from_tensor_slices(elements).batch(batch_size, drop_remainder)

    dataset = dataset.batch(batch_size * window_batches).map(sort).flat_map(cut)
    if seed is not None:
        dataset = dataset.shuffle(window_batches, seed=seed, reshuffle_each_iteration=True)
    if count is not None:
        # Windows hold whole batches but the last, so only the end has a partial one.
        batches = count // batch_size if drop_remainder else -(-count // batch_size)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset


def trim_to_longest(inputs, padding="longest"):
    """Cuts a batch of pre-padded `[B, S, ...]` features to the width `padding` gives its longest.

    For features padded ahead of time (SQuAD windows, CoNLL sentences): every tensor of
    `inputs` whose second axis is S is cut to `padded_width(lengths, S, padding,
    default_bucket_lengths(S))`, the lengths being the row sums of `inputs["input_mask"]`.
    Positions past the longest are padding in every row, so nothing real is cut.

    Args:
      inputs: dict of tensors `[B, S, ...]` (others, e.g. `[B]` targets, are kept as they are).
      padding: "longest", "buckets" (see `BertPreprocessor`) or "fixed" (kept as it is).
    """
    mask = inputs["input_mask"]
    seq_length = mask.shape[1]
    lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
    width = padded_width(lengths, seq_length, padding, default_bucket_lengths(seq_length))
    return {key: value[:, :width] if value.shape.rank >= 2 and value.shape[1] == seq_length
            else value for key, value in inputs.items()}
