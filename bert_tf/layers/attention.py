"""Multi-head scaled dot-product self-attention with BERT's padding mask.

Shapes: B batch, S sequence, N heads, D size per head, H = N·D hidden size.
"""

import math

import keras
import tensorflow as tf

from bert_tf.layers.dense import Dense
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.packing import gather_positions

# What masked scores get: exp underflows to exactly 0 against any real score.
_MASKED = -1e9


def block_diagonal_mask(sequence_ids):
    """The additive attention mask `[B, 1, S, S]` (float32) of rows holding several sequences.

    `sequence_ids` int `[B, S]` numbers each token's sequence in its row (1..k, 0 at
    padding: the `input_mask` of packed records, `data.records.sequence_packing`). Query i
    may attend key j iff `sequence_ids[i] == sequence_ids[j] != 0`: 0 there, -1e9 elsewhere,
    so each sequence attends only to itself (Krell et al. 2021, no cross-contamination).

    Example:
    >>> (block_diagonal_mask(tf.constant([[1, 1, 2, 0]]))[0, 0] == 0).numpy().astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 0, 0],
           [0, 0, 1, 0],
           [0, 0, 0, 0]])
    """
    ids = tf.cast(sequence_ids, tf.int32)
    same = tf.logical_and(tf.equal(ids[:, :, tf.newaxis], ids[:, tf.newaxis, :]),
                          tf.not_equal(ids, 0)[:, tf.newaxis, :])  # [B, S, S]
    return tf.where(same, 0.0, _MASKED)[:, tf.newaxis]


def _swap_heads_and_positions(x):
    """`[B, S, N, D]` <-> `[B, N, S, D]`, as a one-operand einsum.

    Same values as `tf.transpose`. With oneDNN on (TensorFlow's x86 default) `tf.transpose`
    runs as `_MklTranspose`, which costs ~30 µs a call at serving sizes against ~4 µs for the
    einsum kernel's Eigen permute (24 calls per MiniLM request; docs/design.md, "Serving:
    batch 1, TFLite, bf16"), and the packed NER training step (many small attention groups)
    takes ~2.5% less time with it.
    """
    return tf.einsum("abcd->acbd", x)


@keras.saving.register_keras_serializable(package="bert_tf")
class MultiHeadSelfAttention(keras.layers.Layer):
    """Self-attention over `[B, S, H]` with padded keys masked out (paper §3, Vaswani et al.).

    Query/key/value/output are plain `[H, H]` dense kernels, the layout of google-research
    and Hugging Face checkpoints, so conversion is a copy. Softmax runs in float32 under
    mixed precision.

    Args:
      num_heads: N.
      head_size: D.
      dropout_rate: dropout on the attention probabilities.
      causal: if True, position i attends only to positions ≤ i (left-to-right LM ablation).
      initializer_range: stddev of the truncated normal initializer.

    Call with `hidden_states` `[B, S, H]` and `input_mask` `[B, S]`; or, for inference on
    real tokens only, with packed `hidden_states` `[T, H]` and the batch's `packing`
    (`layers.packing.TokenPacking`): the projections then run on the T real tokens, and
    scores and context are computed per length group of sentences. With `output_positions`
    `[B, K]`, queries are taken only at those positions (keys and values at every one) and
    the result is `[B, K, H]`: the same values as the full `[B, S, H]` at those positions
    (packed or not: packed keys and values return to `[B, S, H]` for those few queries).
    With `attention_mask` (`block_diagonal_mask`, `[B, 1, S, S]` additive) scores take that
    mask instead of the padding mask of `input_mask`: rows that hold several sequences.

    Example:
    >>> attention = MultiHeadSelfAttention(num_heads=2, head_size=4)
    >>> attention(tf.zeros([1, 3, 8]), tf.ones([1, 3], tf.int32)).shape
    TensorShape([1, 3, 8])
    """

    def __init__(self, num_heads, head_size, dropout_rate=0.1, causal=False,
                 initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.head_size = head_size
        self.dropout_rate = dropout_rate
        self.causal = causal
        self.initializer_range = initializer_range
        hidden_size = num_heads * head_size
        dense = lambda name: Dense(
            hidden_size, kernel_initializer=truncated_normal(initializer_range), name=name)
        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output")
        self.dropout = Dropout(dropout_rate)

    def build(self, input_shape):
        hidden_size = self.num_heads * self.head_size
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build((None, None, hidden_size))
        self.built = True

    def _split_heads(self, x):
        # Explicit sizes: -1 is ambiguous in a reshape of an empty tensor. One slice of the
        # shape, not two indexings: each costs ~1.5 ms to trace, and this runs 3× per group.
        x = tf.reshape(x, tf.concat([tf.shape(x)[:-1], [self.num_heads, self.head_size]], 0))
        return _swap_heads_and_positions(x)  # [B, N, S, D]

    def call(self, hidden_states, input_mask, training=None, packing=None,
             output_positions=None, attention_mask=None):
        if packing is not None and attention_mask is not None:
            raise ValueError("MultiHeadSelfAttention: `packing` (real tokens only) and "
                             "`attention_mask` (rows of several sequences) do not combine.")
        queried = hidden_states
        if output_positions is not None:
            queried = gather_positions(hidden_states, output_positions, packing)  # [B, K, H]
        # Scaling the query before the matmul costs S·H multiplies instead of S·S·N.
        query = self.query(queried) * tf.cast(1.0 / math.sqrt(self.head_size),
                                              self.compute_dtype)
        key = self.key(hidden_states)
        value = self.value(hidden_states)
        if output_positions is not None and packing is not None:
            key, value = packing.unpack(key), packing.unpack(value)  # [B, S, H]
        if packing is None or output_positions is not None:
            context = self._attend(query, key, value, input_mask, training, output_positions,
                                   attention_mask)
        else:
            # Packed [T, H] projections attend in length groups, then return to [T, H].
            grouped = packing.to_groups(tf.concat([query, key, value], axis=-1))
            attend = lambda qkv, valid: self._attend(*tf.split(qkv, 3, axis=-1), valid, training)
            if training:
                # Empty groups run their ops on empty tensors: a tf.cond per group, and its
                # gradient, made the step's graph slower to trace than it saves.
                contexts = [attend(qkv, valid) for qkv, (_, valid) in zip(grouped, packing.groups)]
            else:
                # Empty groups (batches smaller than the group count) skip their ~20 small ops.
                contexts = [tf.cond(tf.shape(valid)[0] > 0,
                                    lambda qkv=qkv, valid=valid: attend(qkv, valid),
                                    lambda qkv=qkv: qkv[..., :tf.shape(query)[-1]])
                            for qkv, (_, valid) in zip(grouped, packing.groups)]
            context = packing.from_groups(contexts)
        return self.output_dense(context)

    def _attend(self, query, key, value, input_mask, training, query_positions=None,
                attention_mask=None):
        """Scaled dot-product attention of `[B, K, H]` queries over the unmasked keys of
        `[B, S, H]` keys and values; the queries sit at `query_positions` `[B, K]`
        (default: every position, K = S). `attention_mask` `[B, 1, S, S]` (additive)
        replaces the padding mask of `input_mask`."""
        query_shape = tf.shape(query)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)

        scores = tf.cast(tf.matmul(query, key, transpose_b=True), tf.float32)  # [B, N, K, S]
        if attention_mask is None:
            # expand_dims, not [:, None, None, :]: TFLite has no builtin for a new-axis slice.
            # [B,1,1,S]
            allowed = tf.expand_dims(tf.expand_dims(tf.cast(input_mask, tf.bool), 1), 1)
        else:
            if query_positions is not None:  # the mask's rows of the queries: [B, 1, K, S]
                attention_mask = tf.gather(attention_mask, query_positions, axis=2, batch_dims=1)
            scores += attention_mask
            allowed = None
        if self.causal:
            if query_positions is None:
                query_positions = tf.range(query_shape[1])[tf.newaxis]  # [1, S]
            key_positions = tf.range(tf.shape(key)[2])
            earlier = key_positions[tf.newaxis, tf.newaxis, :] <= query_positions[..., tf.newaxis]
            earlier = earlier[:, tf.newaxis]  # [B, 1, K, S]
            allowed = earlier if allowed is None else tf.logical_and(allowed, earlier)
        if allowed is not None:
            # An additive mask rather than a select: its gradient is the identity, no second pass.
            scores += tf.where(allowed, 0.0, _MASKED)
        probs = tf.cast(tf.nn.softmax(scores, axis=-1), value.dtype)
        probs = self.dropout(probs, training=training)

        context = tf.matmul(probs, value)  # [B, N, K, D]
        context = _swap_heads_and_positions(context)  # [B, K, N, D]
        return tf.reshape(context, query_shape)

    def compute_output_shape(self, hidden_states_shape, input_mask_shape=None,
                             output_positions_shape=None):
        if output_positions_shape is None:
            return hidden_states_shape
        return tuple(output_positions_shape) + (hidden_states_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            head_size=self.head_size,
            dropout_rate=self.dropout_rate,
            causal=self.causal,
            initializer_range=self.initializer_range,
        )
        return config
