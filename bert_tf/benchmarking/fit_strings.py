"""`TextClassifier.fit` on raw strings vs keras-hub `BertTextClassifier.fit` (`--what=fit_strings`).

Both are the user's one call on the same BBC News sentences, tokenization included, same model
size, batch 32, timed in turns in one process by the same `StepsTimer` (steps only). Ours
takes the sentences in arrival order as a Python list (`fit(texts, labels, shuffle=False)`),
each batch padded to its longest; keras-hub pads to `seq_length`. Never a test.
"""

import keras
import numpy as np

from bert_tf.benchmarking.finetune import LEARNING_RATE, timed_beside_keras_hub
from bert_tf.benchmarking.keras_hub_peer import StepsTimer
from bert_tf.checkpoints.model_dir import read_config, restore_model_dir
from bert_tf.dtype_policy import policy_scope
from bert_tf.keras_tasks import TextClassifier
from bert_tf.model_dir_reader import vocab_path
from bert_tf.models import BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

OURS = "bert_tf TextClassifier.fit(strings)"


def _ours(model_dir, sentences, labels, num_classes, num_steps, dtype, batch_size, seq_length,
          lower_case):
    with policy_scope(dtype):
        encoder = BertEncoder(read_config(model_dir))
        restore_model_dir(model_dir, encoder=encoder)
        preprocessor = BertPreprocessor(vocab_path(model_dir), lower_case=lower_case,
                                        seq_length=seq_length, padding="longest")
        model = TextClassifier(encoder, num_classes, preprocessor=preprocessor)
        model.compile(optimizer=keras.optimizers.AdamW(LEARNING_RATE, weight_decay=0.01,
                                                       global_clipnorm=1.0))
    count = batch_size * num_steps
    turns = {"next": 0}
    timer = StepsTimer()

    def run():
        # Each turn takes the next sentences in arrival order (wrapping around).
        start = turns["next"] % max(1, len(sentences) - count)
        turns["next"] += count
        model.fit(list(sentences[start:start + count]), labels[start:start + count],
                  batch_size=batch_size, shuffle=False, verbose=0, callbacks=[timer])
        return timer.seconds

    return run


def benchmark_fit_strings(model_dir, sentences, labels, label_names, batch_size=32,
                          seq_length=128, num_steps=10, dtype="float32", repeats=3,
                          lower_case=True):
    """Examples/s of our `fit` on strings and keras-hub's; rows as `benchmark_finetune`'s."""
    sentences, labels = np.asarray(sentences, object), np.asarray(labels, np.int32)
    runners = {OURS: _ours(model_dir, sentences, labels, len(label_names), num_steps, dtype,
                           batch_size, seq_length, lower_case)}
    return timed_beside_keras_hub(runners, "fit_strings", model_dir, sentences, labels,
                                  len(label_names), num_steps, dtype, batch_size, seq_length,
                                  lower_case, repeats)
