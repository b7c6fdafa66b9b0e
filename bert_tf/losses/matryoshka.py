"""MatryoshkaLoss: a contrastive loss over the first dims of the embeddings, weighted and summed.

Kusupati et al. 2022, "Matryoshka Representation Learning": training the loss on each prefix
(768, 512, 256, 128, 64 of a BERT-base embedding) makes every prefix an embedding of its own,
so a search index can keep 64 numbers a text instead of 768. sentence-transformers'
`MatryoshkaLoss`; a `SentenceEncoder(truncate_dim=...)` then embeds at one of those widths.
"""

import keras
import tensorflow as tf

from bert_tf.losses.ranking import LossConfigError, gather_across_replicas

DEFAULT_DIMS = (768, 512, 256, 128, 64)


def truncated(embeddings, dim):
    """The first `dim` numbers of each embedding, L2-normalized again (`[N, dim]` float32)."""
    return tf.math.l2_normalize(tf.cast(embeddings[..., :dim], tf.float32), axis=-1)


def check_dims(dims, width):
    """Raises `LossConfigError` if a Matryoshka dim is above the embeddings' `width`."""
    above = [dim for dim in dims if dim > width]
    if above:
        raise LossConfigError(f"Matryoshka dims {above} are above the embedding width {width} "
                              f"(the model's hidden size); give dims of at most {width}.")


@keras.saving.register_keras_serializable(package="bert_tf")
class MatryoshkaLoss(keras.losses.Loss):
    """`loss` on the embeddings truncated to each of `dims`, summed with `weights`.

    Args:
      loss: a `MultipleNegativesRankingLoss` (or its cached form: the gradients are then
        cached the same way, `mini_batch_size` is the inner loss's).
      dims: embedding prefixes to train, each at most the embedding width.
      weights: one weight per dim; default 1 each (sentence-transformers').

    Example:
    >>> loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), dims=(384, 128, 64))  # doctest: +SKIP
    """

    def __init__(self, loss, dims=DEFAULT_DIMS, weights=None, name="matryoshka_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(loss, dict):
            loss = keras.saving.deserialize_keras_object(loss)
        if not hasattr(loss, "ranking_losses"):
            raise LossConfigError(f"MatryoshkaLoss wraps a MultipleNegativesRankingLoss; "
                                  f"received {type(loss).__name__}.")
        dims = tuple(int(dim) for dim in dims)
        weights = (1.0,) * len(dims) if weights is None else tuple(float(w) for w in weights)
        if not dims or min(dims) < 1 or len(weights) != len(dims):
            raise LossConfigError(f"MatryoshkaLoss takes positive dims and one weight per dim; "
                                  f"received dims={dims}, weights={weights}.")
        self.loss, self.dims, self.weights = loss, dims, weights

    @property
    def mini_batch_size(self):
        return self.loss.mini_batch_size

    @property
    def takes_negatives(self):
        return self.loss.takes_negatives

    def call(self, y_true, y_pred):
        del y_true
        return self.replica_losses(tf.unstack(y_pred, axis=1))

    def replica_losses(self, columns):
        """Per-anchor losses `[b]` (see `MultipleNegativesRankingLoss.replica_losses`)."""
        gathered, offset, _ = gather_across_replicas(columns)
        return self.ranking_losses(columns, gathered, offset)

    def ranking_losses(self, local, gathered, offset):
        """The inner loss's per-anchor losses at each dim, weighted and summed."""
        if local[0].shape[-1] is not None:
            check_dims(self.dims, local[0].shape[-1])
        total = 0.0
        for dim, weight in zip(self.dims, self.weights):
            total += weight * self.loss.ranking_losses(
                [truncated(c, dim) for c in local], [truncated(c, dim) for c in gathered],
                offset)
        return total

    def get_config(self):
        return {**super().get_config(), "loss": keras.saving.serialize_keras_object(self.loss),
                "dims": list(self.dims), "weights": list(self.weights)}
