"""TokenPacking: real tokens only, for inference on batches that arrive unsorted.

Real sentences arrive unsorted, so a batch padded to its longest holds mostly padding (on
the shipped KJV held-out text in arrival order, real tokens are ~34% of a batch of 32).
Position-wise layers (embeddings, dense projections, feed-forward, LayerNorm) give the same
value at a real position whether padding is there or not, so inference runs them on the `T`
real tokens alone. Attention needs sentences side by side: the rows are sorted by length and
cut into `num_groups` groups, each padded only to its own longest (on that text 8 groups of a
batch of 32 compute 1.4× the ideal score entries; one group, i.e. the padded batch, 6×).
NVIDIA's FasterTransformer ("remove padding") and PyTorch's nested tensors do the same;
TensorFlow and Keras have no layer for it, so it is written here with core ops (gather,
argsort, cumsum), which TF Serving's model server has.

Shapes: B batch, S sequence, T real tokens in the batch (`sum(input_mask)`), b rows and L
longest length of one attention group.
"""

import tensorflow as tf

NUM_ATTENTION_GROUPS = 8
# Training on rows of at most this many tokens uses SHORT_ROW_GROUPS groups: each group's ~60
# small ops (forward and gradient) cost more there than the padding fewer groups add
# (docs/design.md, "Packed training").
SHORT_ROW_LENGTH = 128
SHORT_ROW_GROUPS = 2


def training_attention_groups(max_seq_length):
    """Attention groups of a training batch whose rows hold at most `max_seq_length` tokens.

    >>> training_attention_groups(64), training_attention_groups(512)
    (2, 8)
    """
    return SHORT_ROW_GROUPS if max_seq_length <= SHORT_ROW_LENGTH else NUM_ATTENTION_GROUPS


def gather_positions(hidden_states, positions, packing=None):
    """The hidden states at `positions` `[B, K]` of the padded layout: `[B, K, ...]`.

    `hidden_states` is padded `[B, S, ...]`, or packed `[T, ...]` with its `packing`.
    """
    if packing is None:
        return tf.gather(hidden_states, positions, batch_dims=1)
    return tf.gather(hidden_states, packing.slots_at(positions))


class TokenPacking:
    """Where the real tokens of a padded batch are, and how to move them between layouts.

    Tokens are packed in row-major order (sentence by sentence, left to right), so packing
    then unpacking returns every real position to its place; padded positions come back as
    zeros. Any mask works, holes included: a token keeps its own column as its position, and
    attends to the real tokens of its own row.

    Args:
      input_mask: int or bool `[B, S]`, nonzero at real tokens.
      num_groups: attention groups (see the module docstring); empty groups cost nothing
        but a few empty ops.

    Example:
    >>> packing = TokenPacking(tf.constant([[1, 1, 0], [1, 0, 0]]))
    >>> packing.pack(tf.constant([[1, 2, 0], [3, 0, 0]])).numpy().tolist()
    [1, 2, 3]
    >>> packing.unpack(tf.constant([1, 2, 3])).numpy().tolist()
    [[1, 2, 0], [3, 0, 0]]
    """

    def __init__(self, input_mask, num_groups=NUM_ATTENTION_GROUPS):
        real = tf.cast(input_mask, tf.bool)
        self.padded_shape = tf.shape(real, out_type=tf.int64)  # [B, S]
        self.indices = tf.where(real)  # [T, 2] (row, column)
        self.positions = tf.cast(self.indices[:, 1], tf.int32)  # [T]
        self.num_tokens = tf.shape(self.indices)[0]
        self.groups, self._from_groups = self._attention_groups(real, num_groups)

    def pack(self, padded):
        """`[B, S, ...]` → `[T, ...]`: the values at real positions."""
        return tf.gather_nd(padded, self.indices)

    def unpack(self, packed):
        """`[T, ...]` → `[B, S, ...]`: real positions filled, padding zero."""
        shape = tf.concat([self.padded_shape, tf.shape(packed, out_type=tf.int64)[1:]], 0)
        return tf.scatter_nd(self.indices, packed, shape)

    def slots_at(self, positions):
        """Where padded `positions` `[B, K]` (real tokens) sit in the packed layout: `[B, K]`."""
        slots = self.unpack(tf.range(self.num_tokens))  # [B, S]
        return tf.gather(slots, positions, batch_dims=1)

    def to_groups(self, packed):
        """`[T, C]` → one `[b, L, C]` per attention group (zeros past each row's length)."""
        padded = tf.concat([packed, tf.zeros_like(packed[:1])], 0)  # row T: the padding
        return [tf.gather(padded, slots) for slots, _ in self.groups]

    def from_groups(self, grouped):
        """Inverse of `to_groups`: the real rows of each `[b, L, C]` back to `[T, C]`."""
        flat = tf.concat([tf.reshape(g, [-1, tf.shape(g)[-1]]) for g in grouped], 0)
        return tf.gather(flat, self._from_groups)

    def _attention_groups(self, real, num_groups):
        """`([(slots [b, L], valid [b, L]) per group], where each token lands in them)`."""
        lengths = tf.reduce_sum(tf.cast(real, tf.int32), axis=1)  # [B]
        starts = tf.cumsum(lengths, exclusive=True)  # each row's first token in [T]
        order = tf.argsort(lengths, direction="DESCENDING", stable=True)
        batch_size = tf.shape(lengths)[0]
        groups, flat_slots = [], []
        for g in range(num_groups):
            rows = order[g * batch_size // num_groups:(g + 1) * batch_size // num_groups]
            row_lengths = tf.gather(lengths, rows)
            longest = tf.reduce_max(tf.concat([row_lengths, [0]], 0))  # sorted: the first
            columns = tf.range(longest)[tf.newaxis]  # [1, L]
            valid = columns < row_lengths[:, tf.newaxis]  # [b, L]
            slots = tf.where(valid, tf.gather(starts, rows)[:, tf.newaxis] + columns,
                             self.num_tokens)
            groups.append((slots, valid))
            flat_slots.append(tf.reshape(slots, [-1]))
        flat_slots = tf.concat(flat_slots, 0)
        # Every real token sits in exactly one group slot; padding slots point at row T.
        real_slots = tf.where(flat_slots < self.num_tokens)[:, 0]
        from_groups = tf.scatter_nd(tf.gather(flat_slots, real_slots)[:, tf.newaxis],
                                    tf.cast(real_slots, tf.int32), [self.num_tokens])
        return groups, from_groups
