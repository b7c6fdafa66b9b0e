"""CachedMultipleNegativesRankingLoss: the ranking loss of a batch too large to embed at once.

Gao et al. 2021, "Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup"
(GradCache), as sentence-transformers' `CachedMultipleNegativesRankingLoss`: the batch is
embedded in mini-batches without gradients, the loss and its gradient with respect to the
embeddings are computed over the whole batch, then each mini-batch is embedded again with
gradients and back-propagates its slice of that cached gradient. The loss and the gradients are
the plain loss's; the memory is one mini-batch's activations (`contrastive_gradients.py`).
"""

import keras

from bert_tf.losses.ranking import LossConfigError, MultipleNegativesRankingLoss


@keras.saving.register_keras_serializable(package="bert_tf")
class CachedMultipleNegativesRankingLoss(MultipleNegativesRankingLoss):
    """`MultipleNegativesRankingLoss` whose training step embeds `mini_batch_size` texts at a
    time (GradCache): batch 256 on a 2-core machine, with the memory of batch 32.

    It needs the step to embed the texts itself, so it trains through
    `SentenceEncoder.fit` or `run_sentence_embeddings`, not a plain Keras model's `fit`; as a
    Keras loss on given embeddings it is the plain loss.

    Args:
      mini_batch_size: texts per forward pass; it changes memory and time, not the result.
      scale, symmetric: as `MultipleNegativesRankingLoss`.

    Example:
    >>> loss = CachedMultipleNegativesRankingLoss(mini_batch_size=32)
    >>> encoder.compile(loss=loss)                                     # doctest: +SKIP
    """

    def __init__(self, scale=20.0, symmetric=False, mini_batch_size=32,
                 name="cached_multiple_negatives_ranking_loss", **kwargs):
        super().__init__(scale=scale, symmetric=symmetric, name=name, **kwargs)
        if not isinstance(mini_batch_size, int) or mini_batch_size < 1:
            raise LossConfigError(f"mini_batch_size must be a positive integer; received "
                                  f"{mini_batch_size!r}.")
        self.mini_batch_size = mini_batch_size

    def get_config(self):
        return {**super().get_config(), "mini_batch_size": self.mini_batch_size}
