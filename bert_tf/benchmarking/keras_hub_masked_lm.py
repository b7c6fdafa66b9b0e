"""keras-hub's `BertMaskedLM.fit` on the same shape: the peer of the pretraining benchmark.

keras-hub has no NSP head, so the peer trains masked LM only; our step trains MLM + NSP, a
little more work, and is compared as is.
"""

import statistics
import time

import keras
import tensorflow as tf


class _EpochTimer(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self._start)

    def on_train_begin(self, logs=None):
        self.seconds = []


def benchmark_keras_hub_masked_lm(config, batch, dtype="float32", jit_compile=False,
                                  steps_per_epoch=10, epochs=4, steps_per_execution=1):
    """Median `fit` throughput of keras-hub `BertMaskedLM` on `batch` (our batch dict).

    The first epoch (tracing, compilation) is not counted.

    Raises:
      ImportError: keras-hub is not installed (a dev-only peer: `pip install keras-hub`).
    """
    import keras_hub

    keras.mixed_precision.set_global_policy(dtype)
    try:
        backbone = keras_hub.models.BertBackbone(
            vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
            num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
            intermediate_dim=config.intermediate_size,
            max_sequence_length=config.max_position_embeddings,
            dropout=config.hidden_dropout_prob)
        model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
        model.compile(
            optimizer=keras.optimizers.AdamW(1e-4, weight_decay=0.01, global_clipnorm=1.0),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            jit_compile=jit_compile, steps_per_execution=steps_per_execution)
        features = {"token_ids": batch["input_word_ids"], "segment_ids": batch["input_type_ids"],
                    "padding_mask": batch["input_mask"],
                    "mask_positions": batch["masked_lm_positions"]}
        dataset = tf.data.Dataset.from_tensors(
            (features, batch["masked_lm_ids"], batch["masked_lm_weights"])).repeat().prefetch(2)
        timer = _EpochTimer()
        model.fit(dataset, epochs=epochs, steps_per_epoch=steps_per_epoch, verbose=0,
                  callbacks=[timer])
    finally:
        keras.mixed_precision.set_global_policy("float32")
    seconds = statistics.median(timer.seconds[1:]) / steps_per_epoch
    batch_size, seq_length = batch["input_word_ids"].shape
    return {"implementation": "keras_hub_BertMaskedLM.fit", "dtype": dtype,
            "jit_compile": jit_compile, "steps_per_loop": steps_per_execution,
            "batch_size": batch_size, "seq_length": seq_length,
            "seconds_per_step": seconds, "sequences_per_second": batch_size / seconds,
            "tokens_per_second": batch_size * seq_length / seconds}
