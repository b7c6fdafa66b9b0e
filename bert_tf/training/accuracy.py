"""In-graph top-1 correctness, the accuracy numerator of every training loss.

Pretraining's losses get it from `cross_entropy.sparse_cross_entropy`, which has the row max
and label logit at hand; the fine-tuning adapters call `top1_correct`. Both decide with `is_top1`.
"""

import tensorflow as tf


def top1_correct(logits, labels):
    """1.0 where `labels`' logit is the largest over the last axis of `logits`, else 0.0.

    A max and a gather rather than an argmax: TF's CPU ArgMax over the masked-LM logits
    (`[B, P, V]`, V = 30522) takes about twice as long. A tie with the label (of measure zero
    for float logits) counts as correct. `labels` must be valid class ids.

    Example:
    >>> top1_correct(tf.constant([[0.1, 2.0], [3.0, -1.0]]), tf.constant([1, 1])).numpy()
    array([1., 0.], dtype=float32)
    """
    label_logits = tf.gather(logits, labels[..., tf.newaxis], batch_dims=labels.shape.rank)
    return is_top1(label_logits[..., 0], tf.reduce_max(logits, -1))


def is_top1(label_logits, row_max):
    """1.0 where the label's logit reaches its row's max (a tie counts as correct), else 0.0."""
    return tf.cast(label_logits >= row_max, tf.float32)
