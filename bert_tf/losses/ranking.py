"""MultipleNegativesRankingLoss: InfoNCE over in-batch negatives, gathered across replicas.

Each anchor's candidates are every positive of the batch (and every hard negative, when a
negative column is given); the loss is the cross-entropy of `scale` times their cosine
similarities with the anchor's own positive as the label (van den Oord et al. 2018, "CPC";
sentence-transformers' `MultipleNegativesRankingLoss`). Under a `tf.distribute` strategy the
candidates are gathered from every replica first (`gather_across_replicas`), so a global batch
of 64 on two replicas gives each anchor 63 negatives, as one device does.
"""

import keras
import tensorflow as tf

from bert_tf.errors import UserError


class LossConfigError(UserError, ValueError):
    """A contrastive loss built with settings it cannot take (named, with the received value)."""


def gather_across_replicas(columns):
    """Every replica's rows of `columns`, this replica's first row there, the global rows.

    Inside `strategy.run` of a strategy with several replicas (Mirrored, MultiWorkerMirrored,
    TPU) the replica context's `all_gather` joins the replicas' rows in replica order; its
    gradient all-reduces the upstream gradient and hands each replica its own slice back, so
    each replica's loss on its own anchors against all candidates sums to the one-device loss.
    Elsewhere the columns are the whole batch.

    Args:
      columns: list of `[b, D]` embeddings (anchors, positives, negatives...).

    Returns:
      `(gathered columns [B, D], offset, B)`: the global rows `B` and the index of this
      replica's first row among them.
    """
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return columns, 0, tf.shape(columns[0])[0]
    gathered = context.all_gather(list(columns), axis=0)
    sizes = context.all_gather(tf.shape(columns[0])[:1], axis=0)  # [replicas]
    offset = tf.reduce_sum(sizes[:context.replica_id_in_sync_group])
    return gathered, offset, tf.reduce_sum(sizes)


def cosine_scores(queries, keys, scale):
    """`scale` times the cosine similarity of every query with every key, `[Q, K]` float32."""
    queries = tf.math.l2_normalize(tf.cast(queries, tf.float32), axis=-1)
    keys = tf.math.l2_normalize(tf.cast(keys, tf.float32), axis=-1)
    return scale * tf.matmul(queries, keys, transpose_b=True)


def describe(loss):
    """The loss's class and settings, for messages."""
    return f"{type(loss).__name__}(symmetric={loss.symmetric})"


@keras.saving.register_keras_serializable(package="bert_tf")
class MultipleNegativesRankingLoss(keras.losses.Loss):
    """In-batch negatives ranking loss (InfoNCE) on (anchor, positive[, negative]) embeddings.

    As a Keras loss it takes `y_pred` `[B, C, D]`: column 0 the anchors, 1 their positives,
    2.. hard negatives (each anchor's extra candidates), and ignores `y_true`.
    `SentenceEncoder.compile(loss=...)` and `run_sentence_embeddings` call `replica_losses`
    on the embedding columns of a text batch.

    Args:
      scale: the inverse temperature multiplying cosine similarities (sentence-transformers'
        20, temperature 0.05).
      symmetric: also rank each positive against every anchor and average the two losses
        (sentence-transformers' directions query_to_doc + doc_to_query, per_direction); on
        pairs only, as sentence-transformers' MultipleNegativesSymmetricRankingLoss.

    Example:
    >>> loss = MultipleNegativesRankingLoss()
    >>> pairs = tf.stack([tf.eye(4), tf.eye(4)], axis=1)     # [B=4, C=2, D=4]: anchor == positive
    >>> round(float(loss(tf.zeros([4]), pairs)), 4)            # each ranks its positive first
    0.0
    """

    # Mini-batch size of the gradient-cached form (`CachedMultipleNegativesRankingLoss`).
    mini_batch_size = None

    def __init__(self, scale=20.0, symmetric=False, name="multiple_negatives_ranking_loss",
                 **kwargs):
        super().__init__(name=name, **kwargs)
        if not scale > 0:
            raise LossConfigError(f"scale must be greater than 0; received scale={scale}.")
        self.scale = float(scale)
        self.symmetric = bool(symmetric)

    @property
    def takes_negatives(self):
        """Whether hard-negative columns may follow the positives."""
        return not self.symmetric

    def call(self, y_true, y_pred):
        del y_true  # the label is each anchor's own positive
        return self.replica_losses(tf.unstack(y_pred, axis=1))

    def replica_losses(self, columns):
        """Per-anchor losses `[b]` of this replica's anchors against every replica's candidates.

        Args:
          columns: list of `[b, D]` embeddings: anchors, positives, then hard negatives.
        """
        gathered, offset, _ = gather_across_replicas(columns)
        return self.ranking_losses(columns, gathered, offset)

    def ranking_losses(self, local, gathered, offset):
        """Per-anchor losses `[b]` of the `local` rows ranked among the `gathered` ones.

        Args:
          local: list of `[b, D]` columns of this replica (anchors, positives, negatives...).
          gathered: the same columns of every replica, `[B, D]` each.
          offset: the index of `local`'s first row in `gathered`.
        """
        if len(local) < 2:
            raise LossConfigError(f"{type(self).__name__} takes anchors and positives (and "
                                  f"optional negatives); received {len(local)} column(s).")
        if len(local) > 2 and not self.takes_negatives:
            raise LossConfigError(f"{describe(self)} takes (anchor, positive) pairs only; "
                                  "received a negative column: drop it, or use the loss "
                                  "without symmetric=True.")
        anchors, positives = local[0], local[1]
        labels = offset + tf.range(tf.shape(anchors)[0])  # [b]: each anchor's own positive
        forward = cosine_scores(anchors, tf.concat(gathered[1:], axis=0), self.scale)
        positive = tf.gather(forward, labels[:, None], batch_dims=1)[:, 0]
        losses = tf.reduce_logsumexp(forward, axis=1) - positive
        if self.symmetric:
            backward = cosine_scores(positives, gathered[0], self.scale)  # [b, B]
            losses = (losses + tf.reduce_logsumexp(backward, axis=1) - positive) / 2
        return losses

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "symmetric": self.symmetric}
