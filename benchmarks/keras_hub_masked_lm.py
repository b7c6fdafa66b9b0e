"""keras-hub's `BertMaskedLM.fit` on the same shape: the peer of the pretraining benchmark.

keras-hub has no NSP head, so the peer trains masked LM only; our step trains MLM + NSP, a
little more work, and is compared as is.
"""

import keras
import tensorflow as tf

from benchmarks.keras_hub_peer import StepsTimer, keras_hub_backbone
from bert_tf.dtype_policy import policy_scope


def keras_hub_masked_lm_runner(config, batch, num_steps, dtype="float32", jit_compile=False):
    """Builds keras-hub `BertMaskedLM` on `batch` (our batch dict); `run()` fits `num_steps`.

    Each `run()` is one `fit` epoch of `num_steps` steps; the first traces and compiles.
    `run()` returns the seconds from the first step's start to the last step's end: some
    `fit` calls here spend about 2.4 s more in set-up or teardown outside the steps, which
    would count against the peer.

    Raises:
      ImportError: keras-hub is not installed (a dev-only peer: `pip install keras-hub`).
    """
    import keras_hub

    with policy_scope(dtype):
        backbone = keras_hub_backbone(config)
        model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
        model.compile(
            optimizer=keras.optimizers.AdamW(1e-4, weight_decay=0.01, global_clipnorm=1.0),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            jit_compile=jit_compile)
    features = {"token_ids": batch["input_word_ids"], "segment_ids": batch["input_type_ids"],
                "padding_mask": batch["input_mask"],
                "mask_positions": batch["masked_lm_positions"]}
    dataset = tf.data.Dataset.from_tensors(
        (features, batch["masked_lm_ids"], batch["masked_lm_weights"])).repeat().prefetch(2)
    timer = StepsTimer()

    def run():
        model.fit(dataset, epochs=1, steps_per_epoch=num_steps, verbose=0, callbacks=[timer])
        return timer.seconds

    return run
