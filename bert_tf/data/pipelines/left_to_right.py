"""Next-token (left-to-right) LM targets from a masked pretraining batch: paper Table 5, "LTR & No
NSP".

A causal encoder predicts token t+1 at every position t of the unmasked sequence, through the
same tied-weight output head as the masked LM; this `tf.data` map turns the masked batches of
either pretraining pipeline into those targets.
"""

import tensorflow as tf


def to_left_to_right(batch):
    """Turns a masked pretraining batch into next-token LM targets (a `tf.data` map fn).

    The masked tokens are put back (`masked_lm_ids` at `masked_lm_positions`), then position
    t predicts token t+1 wherever t+1 is a real token: `masked_lm_positions` = 0..S-2,
    `masked_lm_ids` = the tokens 1..S-1, `masked_lm_weights` = `input_mask[:, 1:]`.

    Args:
      batch: dict of `[B, S]` / `[B, P]` tensors (see the module docstring of the data pipelines).
    """
    ids = batch["input_word_ids"]
    batch_size, seq_length = tf.shape(ids)[0], tf.shape(ids)[1]
    real = batch["masked_lm_weights"] > 0
    rows = tf.broadcast_to(tf.range(batch_size)[:, None], tf.shape(batch["masked_lm_positions"]))
    where = tf.stack([tf.boolean_mask(rows, real),
                      tf.boolean_mask(batch["masked_lm_positions"], real)], axis=1)
    original = tf.tensor_scatter_nd_update(ids, where, tf.boolean_mask(batch["masked_lm_ids"],
                                                                       real))
    positions = tf.broadcast_to(tf.range(seq_length - 1)[None], [batch_size, seq_length - 1])
    return {**batch,
            "input_word_ids": original,
            "masked_lm_positions": positions,
            "masked_lm_ids": original[:, 1:],
            "masked_lm_weights": tf.cast(batch["input_mask"][:, 1:], tf.float32)}
