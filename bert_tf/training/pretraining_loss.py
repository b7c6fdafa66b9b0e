"""Pretraining losses: masked LM + next-sentence prediction, and the baseline they must beat.

Losses (paper §3.1, Appendix A.2): the masked-LM cross-entropy over the real predictions
(`masked_lm_weights` = 1) plus the NSP cross-entropy. Each example's masked-LM loss is the
mean over its own predictions; the sum over examples is divided by the *global* batch size,
the way tf.distribute and gradient accumulation need it (google-research divides one
token-weighted sum by the batch's count of predictions; the two agree whenever examples
carry equally many predictions, as full-length examples do).

A packed row (records of `--max_sequences_per_pack`: `next_sentence_weights` [B, K] in
the batch) is one example: its masked-LM loss is the mean over all its predictions, its
NSP loss the mean over its sequences (`next_sentence_weights` 1, empty slots 0).
"""

import numpy as np
import tensorflow as tf

from bert_tf.training.cross_entropy import sparse_cross_entropy


def pretraining_loss_fn(global_batch_size, use_next_sentence=True):
    """Returns `loss_fn(batch, outputs) -> (loss, metrics)` for the train loop.

    Args:
      global_batch_size: sequences per update over all replicas (the loss divisor).
      use_next_sentence: add the NSP loss (False for `--no_nsp` and `--left_to_right`).

    The metrics are `(numerator, denominator)` sums: `mlm_accuracy`, `mlm_loss` (per real
    prediction), with NSP `nsp_accuracy`, `nsp_loss` (per example), and `real_tokens`, the
    share of the batch's slots that hold a token rather than padding. NSP metrics count
    sequences (a packed row's each).
    """

    def loss_fn(batch, outputs):
        weights = tf.cast(batch["masked_lm_weights"], tf.float32)  # [B, P]
        labels = tf.cast(batch["masked_lm_ids"], tf.int32)
        logits = tf.cast(outputs["mlm_logits"], tf.float32)  # [B, P, V]
        token_loss, correct = sparse_cross_entropy(labels, logits)  # [B, P] each
        per_example = tf.math.divide_no_nan(tf.reduce_sum(token_loss * weights, axis=1),
                                            tf.reduce_sum(weights, axis=1))  # [B]
        count = tf.reduce_sum(weights)
        input_mask = tf.cast(tf.not_equal(batch["input_mask"], 0), tf.float32)  # packed: 1..k
        metrics = {"mlm_accuracy": (tf.reduce_sum(correct * weights), count),
                   "mlm_loss": (tf.reduce_sum(token_loss * weights), count),
                   "real_tokens": (tf.reduce_sum(input_mask), tf.cast(tf.size(input_mask),
                                                                       tf.float32))}
        if use_next_sentence and "next_sentence_weights" in batch:  # packed rows
            nsp_weights = tf.cast(batch["next_sentence_weights"], tf.float32)  # [B, K]
            nsp_logits = tf.cast(outputs["nsp_logits"], tf.float32)  # [B, K, 2]
            nsp_loss, nsp_correct = sparse_cross_entropy(batch["next_sentence_labels"], nsp_logits)
            per_example += tf.math.divide_no_nan(tf.reduce_sum(nsp_loss * nsp_weights, axis=1),
                                                 tf.reduce_sum(nsp_weights, axis=1))
            sequences = tf.reduce_sum(nsp_weights)
            metrics["nsp_accuracy"] = (tf.reduce_sum(nsp_correct * nsp_weights), sequences)
            metrics["nsp_loss"] = (tf.reduce_sum(nsp_loss * nsp_weights), sequences)
        elif use_next_sentence:
            nsp_labels = tf.reshape(tf.cast(batch["next_sentence_labels"], tf.int32), [-1])
            nsp_logits = tf.cast(outputs["nsp_logits"], tf.float32)  # [B, 2]
            nsp_loss, nsp_correct = sparse_cross_entropy(nsp_labels, nsp_logits)
            per_example += nsp_loss
            examples = tf.cast(tf.size(nsp_labels), tf.float32)
            metrics["nsp_accuracy"] = (tf.reduce_sum(nsp_correct), examples)
            metrics["nsp_loss"] = (tf.reduce_sum(nsp_loss), examples)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)
        return loss, metrics

    return loss_fn


def unigram_baseline_accuracy(batches):
    """Accuracy of always predicting the most frequent masked token of `batches`.

    The baseline a masked LM must beat: an upper bound for any context-free predictor on
    these targets, since it picks the mode of the very tokens it is scored on.
    """
    counts = {}
    for batch in batches:
        ids = batch["masked_lm_ids"].numpy().ravel()
        weights = batch["masked_lm_weights"].numpy().ravel()
        for token, weight in zip(ids[weights > 0], weights[weights > 0]):
            counts[int(token)] = counts.get(int(token), 0.0) + float(weight)
    if not counts:
        raise ValueError("No masked predictions in the batches.")
    return max(counts.values()) / sum(counts.values())


def majority_label_share(batches):
    """Accuracy of always guessing the commoner next-sentence label of `batches`.

    NSP's real chance level: short chunks always take a random B, so held-out pairs are not
    50/50 (about 61% NotNext on the demo corpus at seq 64).
    """
    counts = np.zeros(2)
    for batch in batches:
        labels = np.asarray(batch["next_sentence_labels"]).ravel()
        # packed rows: empty slots weigh 0
        weights = (np.asarray(batch["next_sentence_weights"]).ravel()
                   if "next_sentence_weights" in batch else None)
        counts += np.bincount(labels, weights=weights, minlength=2)[:2]
    if not counts.sum():
        raise ValueError("No next-sentence labels in the batches.")
    return float(counts.max() / counts.sum())
