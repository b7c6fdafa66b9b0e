"""Datasets without tf.data's autotuning thread, whose iterators are deleted at once."""

import tensorflow as tf

_NO_AUTOTUNE = tf.data.Options()
_NO_AUTOTUNE.autotune.enabled = False


def without_autotune(dataset):
    """`dataset` with tf.data's autotuning model off.

    Each iterator of an autotuned dataset runs a model thread that sleeps between rounds,
    longer as the iterator lives; deleting the iterator waits out the current sleep (TF
    2.21: 16.6 s for an iterator idle 24 s, 1 ms without the thread). Keras `fit` deletes
    the last epoch's iterator as the next epoch starts, so every epoch could open with such
    a pause (2-40 s seen on WNUT-16 fine-tuning). Without the model, `AUTOTUNE` maps use
    every core and prefetch keeps its own buffer tuning.

    Example:
    >>> without_autotune(tf.data.Dataset.range(3)).options().autotune.enabled
    False
    """
    return dataset.with_options(_NO_AUTOTUNE)
