"""`TextClassifier.fit` on raw strings vs keras-hub `BertTextClassifier.fit` (`--what=fit_strings`).

Both are the user's one call on the same BBC News sentences, tokenization included, same model
size, batch 32, timed in turns in one process by the same `StepsTimer` (steps only). Ours
takes the sentences in arrival order as a Python list (`fit(texts, labels, shuffle=False)`),
each batch padded to its longest, and once more with `group_by_length=True` (batches of like
length, as the entry points train); keras-hub pads to `seq_length`.

Latency beside throughput: `predict` of the same classifier on a list (read in order through a
generator over the traced preprocessor) and on a `tf.data` dataset of the same strings (read
through `dataset.map`, as lists were before d6aa948), two sentences and the dev sentences,
timed in turns (rows `what=predict_strings`).

Quality beside speed: each also fine-tunes a fresh classifier on the same pretrained weights
for one epoch over the first `1 - DEV_FRACTION` of the sentences (same order, batch size and
optimizer) and reports its accuracy on the rest. keras-hub reads the weights through its own
Hugging Face converter (`BertBackbone.from_preset` on our model written as a Hugging Face
folder), so neither side's loading is trusted to the other. Never a test.
"""

import tempfile

import keras
import numpy as np
import tensorflow as tf

from benchmarks.finetune import KERAS_HUB_PEER, LEARNING_RATE, timed_beside_keras_hub
from benchmarks.keras_hub_peer import StepsTimer
from benchmarks.timing import interleaved_median_seconds
from bert_tf.checkpoints import export_huggingface_checkpoint
from bert_tf.checkpoints.model_dir import read_config, restore_model_dir, vocab_path
from bert_tf.dtype_policy import policy_scope
from bert_tf.keras_tasks import TextClassifier
from bert_tf.models import BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

OURS = "bert_tf TextClassifier.fit(strings)"
OURS_GROUPED = "bert_tf TextClassifier.fit(strings, group_by_length=True)"
PREDICT_LIST = "bert_tf TextClassifier.predict(list)"
PREDICT_DATASET = "bert_tf TextClassifier.predict(dataset)"
PREDICT_KERAS_HUB = "keras_hub BertTextClassifier.predict(list)"
# Our two ways to call fit: in arrival order, and batched by length as the entry points train.
OUR_FIT_ARGUMENTS = {OURS: {}, OURS_GROUPED: {"group_by_length": True}}
# The share of the sentences held out for the dev accuracy (the last ones drawn).
DEV_FRACTION = 0.2


def _dev_count(count):
    return max(1, int(count * DEV_FRACTION))


def _optimizer():
    return keras.optimizers.AdamW(LEARNING_RATE, weight_decay=0.01, global_clipnorm=1.0)


def _our_classifier(model_dir, num_classes, seq_length, lower_case):
    encoder = BertEncoder(read_config(model_dir))
    restore_model_dir(model_dir, encoder=encoder)
    preprocessor = BertPreprocessor(vocab_path(model_dir), lower_case=lower_case,
                                    seq_length=seq_length, padding="longest")
    model = TextClassifier(encoder, num_classes, preprocessor=preprocessor)
    model.compile(optimizer=_optimizer())
    return model


def _ours(model_dir, sentences, labels, num_classes, num_steps, dtype, batch_size, seq_length,
          lower_case, fit_arguments):
    with policy_scope(dtype):
        model = _our_classifier(model_dir, num_classes, seq_length, lower_case)
    count = batch_size * num_steps
    turns = {"next": 0}
    timer = StepsTimer()

    def run():
        # Each turn takes the next sentences in arrival order (wrapping around).
        start = turns["next"] % max(1, len(sentences) - count)
        turns["next"] += count
        model.fit(list(sentences[start:start + count]), labels[start:start + count],
                  batch_size=batch_size, shuffle=False, verbose=0, callbacks=[timer],
                  **fit_arguments)
        return timer.seconds

    return run


def _keras_hub_classifier(model_dir, num_classes, seq_length, lower_case):
    import keras_hub  # dev-only peer

    with tempfile.TemporaryDirectory() as hf_dir:
        export_huggingface_checkpoint(model_dir, hf_dir)
        backbone = keras_hub.models.BertBackbone.from_preset(hf_dir)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocab_path(model_dir),
                                               lowercase=lower_case)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=seq_length)
    model = keras_hub.models.BertTextClassifier(backbone, num_classes, preprocessor=preprocessor)
    model.compile(optimizer=_optimizer(),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def dev_accuracy_after_one_epoch(model_dir, sentences, labels, num_classes, batch_size=32,
                                 seq_length=128, dtype="float32", lower_case=True):
    """`{implementation: dev accuracy}` after one epoch of `fit` on the training part.

    Ours and keras-hub's (where installed) start from the same pretrained encoder and a
    seeded head, and see the training sentences in the same order (`shuffle=False`).
    """
    split = len(sentences) - _dev_count(len(sentences))
    builders = {name: (_our_classifier, arguments) for name, arguments in OUR_FIT_ARGUMENTS.items()}
    builders[KERAS_HUB_PEER] = (_keras_hub_classifier, {})
    accuracy = {}
    for name, (build, fit_arguments) in builders.items():
        keras.utils.set_random_seed(0)
        with policy_scope(dtype):
            try:
                model = build(model_dir, num_classes, seq_length, lower_case)
            except ImportError:
                continue
        model.fit(list(sentences[:split]), labels[:split], batch_size=batch_size, epochs=1,
                  shuffle=False, verbose=0, **fit_arguments)
        logits = model.predict(list(sentences[split:]), batch_size=batch_size, verbose=0)
        accuracy[name] = float(np.mean(np.argmax(logits, axis=-1) == labels[split:]))
    return accuracy


def _predict(model, x, **kwargs):
    def run():
        model.predict(x, verbose=0, **kwargs)
    return run


def predict_seconds(model_dir, sentences, num_classes, batch_size=32, seq_length=128,
                    dtype="float32", repeats=3, lower_case=True):
    """Rows of median `predict` seconds on a list and on a dataset of the same strings (two
    sentences, then all of `sentences`), and keras-hub's on the list where it is installed,
    timed in turns in this process."""
    with policy_scope(dtype):
        model = _our_classifier(model_dir, num_classes, seq_length, lower_case)
        try:
            peer = _keras_hub_classifier(model_dir, num_classes, seq_length, lower_case)
        except ImportError:
            peer = None
    rows = []
    for texts in (list(sentences[:2]), list(sentences)):
        strings = tf.data.Dataset.from_tensor_slices(texts).batch(batch_size)
        runners = {PREDICT_LIST: _predict(model, texts, batch_size=batch_size),
                   PREDICT_DATASET: _predict(model, strings)}
        if peer is not None:
            runners[PREDICT_KERAS_HUB] = _predict(peer, texts, batch_size=batch_size)
        seconds = interleaved_median_seconds(runners, repeats)
        rows += [{"what": "predict_strings", "implementation": name, "texts": len(texts),
                  "median_s": value} for name, value in seconds.items()]
    return rows


def benchmark_fit_strings(model_dir, sentences, labels, label_names, batch_size=32,
                          seq_length=128, num_steps=10, dtype="float32", repeats=3,
                          lower_case=True):
    """Examples/s of our `fit` on strings and keras-hub's, rows as `benchmark_finetune`'s,
    each with `dev_accuracy` after one epoch (`dev_accuracy_after_one_epoch`) and the
    `train_sentences`/`dev_sentences` it used."""
    sentences, labels = np.asarray(sentences, object), np.asarray(labels, np.int32)
    runners = {name: _ours(model_dir, sentences, labels, len(label_names), num_steps, dtype,
                           batch_size, seq_length, lower_case, arguments)
               for name, arguments in OUR_FIT_ARGUMENTS.items()}
    rows = timed_beside_keras_hub(runners, "fit_strings", model_dir, sentences, labels,
                                  len(label_names), num_steps, dtype, batch_size, seq_length,
                                  lower_case, repeats)
    accuracy = dev_accuracy_after_one_epoch(model_dir, sentences, labels, len(label_names),
                                            batch_size, seq_length, dtype, lower_case)
    dev = _dev_count(len(sentences))
    return [dict(row, dev_accuracy=accuracy.get(row["implementation"]),
                 train_sentences=len(sentences) - dev, dev_sentences=dev) for row in rows] + \
        predict_seconds(model_dir, sentences[-dev:], len(label_names), batch_size, seq_length,
                        dtype, repeats, lower_case)
