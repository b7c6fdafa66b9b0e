"""keras-hub's BERT of the same shape as a `BertConfig`: the peer every benchmark compares to.

keras-hub is a dev-only peer (`pip install -e '.[bench]'`); without it this raises ImportError,
which each benchmark reports as a skipped row.
"""

import time

import keras


def keras_hub_backbone(config):
    """A `keras_hub.models.BertBackbone` with the sizes and dropout of `config` (random weights:
    speed does not depend on their values)."""
    import keras_hub  # dev-only peer

    return keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings, dropout=config.hidden_dropout_prob)


class StepsTimer(keras.callbacks.Callback):
    """Seconds from the start of an epoch's first step to the end of its last (`.seconds`).

    Times `fit` without its per-call set-up (building the data adapter, callbacks), so that
    the peer's figure is its steps alone.
    """

    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:
            self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.seconds = time.perf_counter() - self._start
