"""In-graph masked-LM masking for dynamic pretraining, reproducible per batch.

Built on `tensorflow_text.mask_language_model` with a `RandomItemSelector` (or
a whole-word selector) and a `MaskValuesChooser`. All randomness is stateless
and comes from one seed per batch, so batch `n` is the same whether it is
reached by iterating or after `skip(n)`, whatever the tf.data parallelism.
"""

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops import item_selector_ops


def _random_keys(ids, seed):
    """A uniform random key per flat position of ragged `ids`."""
    return tf.random.stateless_uniform(tf.shape(ids.flat_values)[:1], seed=seed)


# Base class not exported at top level.
class WholeWordItemSelector(item_selector_ops.ItemSelector):
    """Selects whole words until the row's WordPiece budget is spent.

    Hand-written because `RandomItemSelector` on `[batch, (words), (pieces)]`
    counts and caps *words*, so masked pieces could exceed
    `max_predictions_per_seq`. Here the budget is google-research's:
    `min(max_predictions, max(1, round(num_pieces * rate)))` pieces per row,
    filled with words in random order; the first word that does not fit ends
    the selection (google-research keeps looking for shorter words).

    Example:
    >>> words = tf.ragged.constant([[[101], [7, 8], [9], [102]]])
    >>> selector = WholeWordItemSelector(4, 0.5, [101, 102], seed=[1, 2])
    >>> selector.get_selection_mask(words, axis=1).flat_values.numpy().tolist().count(True) >= 1
    True
    """

    def __init__(self, max_selections_per_batch, selection_rate, unselectable_ids, seed):
        super().__init__(unselectable_ids)
        self.max_selections_per_batch = max_selections_per_batch
        self.selection_rate = selection_rate
        self.seed = seed

    def get_selection_mask(self, input_ids, axis):
        if axis != 1:
            raise ValueError(f"WholeWordItemSelector selects words on axis 1, got axis={axis}")
        selectable = self.get_selectable(input_ids, axis)  # [B, (words)]
        word_lengths = input_ids.row_lengths(axis=2)  # [B, (words)]
        num_pieces = tf.reduce_sum(input_ids.row_lengths(axis=2), axis=1)  # [B]
        budget = tf.minimum(
            tf.cast(self.max_selections_per_batch, tf.int64),
            tf.maximum(
                tf.cast(1, tf.int64),
                tf.cast(tf.round(tf.cast(num_pieces, tf.float32) * self.selection_rate), tf.int64),
            ),
        )
        # Random order of the selectable words; unselectable ones sort last.
        keys = tf.where(selectable.flat_values, _random_keys(selectable, self.seed), 2.0)
        keys = selectable.with_flat_values(keys).to_tensor(default_value=3.0)  # [B, W]
        order = tf.argsort(keys, axis=1, stable=True)
        # [B, W]
        lengths = tf.where(selectable, word_lengths, tf.zeros_like(word_lengths)).to_tensor()
        cumulative = tf.cumsum(tf.gather(lengths, order, batch_dims=1), axis=1)
        chosen_sorted = (cumulative <= budget[:, None]) & (tf.gather(lengths, order,
                                                                     batch_dims=1) > 0)
        # Scatter the choice back from sorted order to word order.
        inverse = tf.argsort(order, axis=1, stable=True)
        chosen = tf.gather(chosen_sorted, inverse, batch_dims=1)
        return tf.RaggedTensor.from_tensor(chosen, lengths=selectable.row_lengths())


class StatelessMaskValuesChooser(tf_text.MaskValuesChooser):
    """`MaskValuesChooser` (80% `[MASK]`, 10% random id, 10% kept) with a seed.

    `MaskValuesChooser.get_mask_values` draws from the stateful global RNG,
    whose order under parallel tf.data maps is not reproducible; this override
    draws the same decisions from `tf.random.stateless_uniform`.
    """

    def __init__(self, vocab_size, mask_token, seed, mask_token_rate=0.8, random_token_rate=0.1):
        super().__init__(vocab_size, mask_token, mask_token_rate, random_token_rate)
        self.seed = seed

    def get_mask_values(self, masked_lm_ids):
        flat = masked_lm_ids.flat_values
        seeds = tf.random.experimental.stateless_split(self.seed, num=2)
        draw = tf.random.stateless_uniform(tf.shape(flat), seed=seeds[0])
        random_ids = tf.random.stateless_uniform(
            tf.shape(flat), seed=seeds[1], maxval=self.vocab_size, dtype=flat.dtype)
        values = tf.where(draw < self._mask_token_rate, tf.cast(self.mask_token, flat.dtype),
                          tf.where(draw < self._mask_token_rate + self.random_token_rate,
                                   random_ids, flat))
        return masked_lm_ids.with_flat_values(values)


def mask_batch(input_ids, word_starts, seed, vocab_size, mask_id, special_ids, masked_lm_prob,
               max_predictions_per_seq, whole_word_mask):
    """Masks a batch of packed sequences.

    Args:
      input_ids: int32 ragged [B, (L)], packed `[CLS] A [SEP] B [SEP]`.
      word_starts: bool ragged [B, (L)], True where a word (or special) begins.
      seed: int64 [2], this batch's seed.
      vocab_size, mask_id: for the 80/10/10 values.
      special_ids: ids never selected (`[CLS]`, `[SEP]`).
      masked_lm_prob, max_predictions_per_seq: the selection rate and cap.
      whole_word_mask: select whole words instead of single pieces.

    Returns:
      `(masked_ids [B, (L)], positions [B, (N)] int32, original_ids [B, (N)])`.
    """
    select_seed, value_seed = tf.unstack(tf.random.experimental.stateless_split(seed, num=2))
    chooser = StatelessMaskValuesChooser(vocab_size, mask_id, value_seed)
    if whole_word_mask:
        starts = tf.where(word_starts.flat_values)[:, 0]
        words = tf.RaggedTensor.from_row_starts(input_ids.flat_values, starts, validate=False)
        # [B, (words), (pieces)]
        words = tf.RaggedTensor.from_row_lengths(words,
                                                 tf.reduce_sum(tf.cast(word_starts, tf.int64),
                                                               axis=1), validate=False)
        selector = WholeWordItemSelector(max_predictions_per_seq, masked_lm_prob, special_ids,
                                         select_seed)
        # Returns masked ids merged back to [B, (L)].
        masked, positions, labels = tf_text.mask_language_model(words, selector, chooser, axis=1)
    else:
        keys = _random_keys(input_ids, select_seed)
        # RandomItemSelector shuffles flat positions; ordering them by a per-position key
        # drawn from the batch seed makes the shuffle stateless.
        selector = tf_text.RandomItemSelector(
            max_predictions_per_seq,
            masked_lm_prob,
            special_ids,
            shuffle_fn=lambda positions: tf.gather(
                positions, tf.argsort(tf.gather(keys, positions))
            ),
        )
        masked, positions, labels = tf_text.mask_language_model(input_ids, selector, chooser,
                                                                axis=1)
    return masked, tf.cast(positions, tf.int32), labels
