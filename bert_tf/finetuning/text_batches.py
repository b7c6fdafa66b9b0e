"""Batches for every fine-tuning task: order, repetition, resumption and padding to the batch.

Sentence tasks and SWAG tokenize whole texts in-graph (`text_batches`, with a `pack` function);
SQuAD windows and CoNLL sentences are padded ahead of time (`feature_batches`). Either way a
batch is as wide as its own longest sequence unless the padding is "fixed" (see
`BertPreprocessor`), and training batches are sorted by length within shuffle windows
(`data.length_bucketing`) so that little of each batch is padding; the training order stays
random across lengths. Evaluation and prediction batches keep the input order, each packed to
its own longest sequence, so results line up with the examples without any reordering.
"""

import tensorflow as tf

from bert_tf.data.autotune import without_autotune
from bert_tf.finetuning.length_bucketing import length_sorted_batches, trim_to_longest


def batches(elements, count, pack, batch_size, training=False, seed=0, skip_batches=0,
            length_fn=None):
    """Batches of `pack(*batch)` over the examples of `elements`.

    Training data is shuffled each epoch (seeded, so the order is the same on a rerun) and
    repeated, with whole batches only; with `length_fn` each batch holds examples of like
    length (sorted within windows, batches reshuffled with `seed`). `skip_batches` drops the
    batches a resumed run already trained on. Evaluation data: input order, once.

    Args:
      elements: a tuple of per-example (nests of) arrays, e.g. `(texts, labels)`.
      count: the number of examples (the shuffle buffer holds them all).
      pack: `fn(*batch) -> batch for the model`, run in-graph by `Dataset.map`.
      batch_size: examples per batch.
      training: shuffle, repeat and keep whole batches (else input order, once).
      seed: the shuffle's seed.
      skip_batches: training batches to drop first (those a resumed run already took).
      length_fn: `fn(window of elements) -> int [window]` lengths, or None (no sorting).
    """
    dataset = tf.data.Dataset.from_tensor_slices(elements)
    if training:
        dataset = dataset.shuffle(count, seed=seed, reshuffle_each_iteration=True).repeat()
    if training and length_fn is not None:
        dataset = length_sorted_batches(dataset, length_fn, batch_size, drop_remainder=True,
                                        seed=seed)
    else:
        dataset = dataset.batch(batch_size, drop_remainder=training)
    dataset = dataset.skip(skip_batches)
    return without_autotune(
        dataset.map(pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))


def packed_lengths(mask):
    """Real tokens per example of an int mask `[B, S]`, or the longest choice's of `[B, C, S]`."""
    per_sequence = tf.reduce_sum(tf.cast(mask, tf.int32), axis=-1)
    return tf.reduce_max(tf.reshape(per_sequence, [tf.shape(mask)[0], -1]), axis=1)


def text_batches(texts, labels, count, pack, batch_size, training=False, seed=0,
                 skip_batches=0, padding="fixed"):
    """Batches of `(pack(texts), labels)`, or `pack(texts)` when `labels` is None.

    Args:
      texts: a tuple of per-example arrays (one element per text field).
      labels: per-example labels, or None.
      count: the number of examples.
      pack: `fn(batch of texts) -> encoder inputs`, e.g. a `BertPreprocessor` call.
      batch_size, training, seed, skip_batches: as in `batches`.
      padding: the padding `pack` applies (`BertPreprocessor.padding`); unless "fixed",
        training batches are sorted by packed length. The length of a window is `pack`'s
        mask, so the window is tokenized twice (cheap beside the model).
    """
    # One-element tuples so that map functions get the text tuple as one argument.
    elements = (texts,) if labels is None else (texts, labels)
    packed = pack if labels is None else (lambda batch, y: (pack(batch), y))
    length_fn = (lambda window: packed_lengths(pack(window[0])["input_mask"])) \
        if padding != "fixed" else None
    return batches(elements, count, packed, batch_size, training, seed, skip_batches, length_fn)


def feature_batches(inputs, targets, count, batch_size, padding="fixed", training=False, seed=0,
                    skip_batches=0):
    """Batches of `(inputs, targets)` (or `inputs` when `targets` is None) of pre-padded features.

    Every batch is cut to the width `padding` gives its longest sequence (`trim_to_longest`:
    the `[B, S]` arrays of `inputs` and `targets`, e.g. CoNLL `label_ids`, are cut alike), and
    training batches are sorted by length unless `padding` is "fixed".

    Args:
      inputs: dict of `[N, S]` encoder inputs (with `input_mask`).
      targets: dict of per-example targets (`[N]` or `[N, S]`), or None.
      count, batch_size, training, seed, skip_batches: as in `batches`.
      padding: as in `BertPreprocessor` ("fixed" keeps S; "buckets" uses its default widths).
    """
    def pack(batch_inputs, batch_targets=None):
        trimmed = trim_to_longest({**batch_inputs, **(batch_targets or {})}, padding)
        cut_inputs = {key: trimmed[key] for key in batch_inputs}
        if batch_targets is None:
            return cut_inputs
        return cut_inputs, {key: trimmed[key] for key in batch_targets}

    elements = (inputs,) if targets is None else (inputs, targets)
    length_fn = None if padding == "fixed" else (
        lambda window: packed_lengths(window[0]["input_mask"]))
    return batches(elements, count, pack, batch_size, training, seed, skip_batches, length_fn)
