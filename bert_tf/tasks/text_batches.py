"""Batches of in-graph tokenized text for every fine-tuning task that reads whole texts.

Sentence tasks and SWAG differ only in how a batch of texts becomes encoder inputs (`pack`);
the order, repetition, resumption and labels are the same for both, and live here.
"""

import tensorflow as tf


def text_batches(texts, labels, count, pack, batch_size, training=False, seed=0,
                 skip_batches=0):
    """Batches of `(pack(texts), labels)`, or `pack(texts)` when `labels` is None.

    Training data is shuffled each epoch (seeded, so the order is the same on a rerun) and
    repeated, with whole batches only; `skip_batches` drops batches before they are
    tokenized (a resumed run skips what it already trained on).

    Args:
      texts: a tuple of per-example arrays (one element per text field).
      labels: per-example labels, or None.
      count: the number of examples (the shuffle buffer holds them all).
      pack: `fn(batch of texts) -> encoder inputs`, run in-graph by `Dataset.map`.
      batch_size, training, seed, skip_batches: as above.
    """
    # One-element tuples so that map functions get the text tuple as one argument.
    elements = (texts,) if labels is None else (texts, labels)
    dataset = tf.data.Dataset.from_tensor_slices(elements)
    if training:
        dataset = dataset.shuffle(count, seed=seed, reshuffle_each_iteration=True).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=training).skip(skip_batches)
    packed = pack if labels is None else (lambda batch, y: (pack(batch), y))
    return dataset.map(packed, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
