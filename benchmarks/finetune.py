"""Fine-tuning throughput on real sentences (`benchmarks/benchmark.py --what=finetune`).

Three runners train a sentence classifier on the same BBC News sentences, tokenization
included, timed in turns in one process:
- "bert_tf longest": the classifier adapter's pipeline as `run_classifier` runs it by
  default: batches sorted by length within shuffle windows and packed to their own longest
  sentence (`padding="longest"`);
- "bert_tf fixed": the same pipeline with `padding="fixed"`, every batch `seq_length` wide;
- "keras_hub BertTextClassifier.fit": the peer, with its own preprocessor (fixed length).
All use `train_loop.Trainer` (ours) or `fit` (keras-hub) with AdamW, dropout on, float32
unless `dtype` says otherwise. Never a test.
"""

import keras
import numpy as np
import tensorflow as tf

from benchmarks.keras_hub_peer import StepsTimer, keras_hub_backbone
from benchmarks.timing import interleaved_median_seconds
from bert_tf.checkpoints.model_dir import read_config, restore_model_dir, vocab_path
from bert_tf.dtype_policy import policy_scope
from bert_tf.finetuning.adapters import classifier_adapter
from bert_tf.finetuning.sentence_task import SentenceExamples, SentenceTask
from bert_tf.models import BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.train_loop import Trainer

KERAS_HUB_PEER = "keras_hub BertTextClassifier.fit"
LEARNING_RATE = 5e-5


def _ours(model_dir, dataset, adapter, num_steps, dtype, batch_size):
    """`run()` trains `num_steps` steps of our Trainer on `dataset`; the first call compiles."""
    with policy_scope(dtype):
        strategy = get_strategy("one_device")
        with strategy.scope():
            model = adapter.build_model(BertEncoder(read_config(model_dir)))
            restore_model_dir(model_dir, encoder=model.encoder)
            optimizer = create_optimizer("adamw", LEARNING_RATE, 10**6, 10, dtype=dtype)
    trainer = Trainer(strategy, model, adapter.loss_fn(batch_size), optimizer)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    count = tf.constant(num_steps, tf.int32)

    def run():
        float(trainer.loop_fn(iterator, count)[0])  # waits for the last step

    return run


def keras_hub_fit_runner(model_dir, sentences, labels, num_classes, num_steps, dtype,
                         batch_size, seq_length, lower_case):
    """keras-hub `BertTextClassifier` (same shape, its own preprocessor) `fit` runner."""
    import keras_hub  # dev-only peer

    config = read_config(model_dir)
    with policy_scope(dtype):
        backbone = keras_hub_backbone(config)
        tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocab_path(model_dir),
                                                   lowercase=lower_case)
        preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
            tokenizer, sequence_length=seq_length)
        model = keras_hub.models.BertTextClassifier(backbone, num_classes,
                                                    preprocessor=preprocessor)
        model.compile(optimizer=keras.optimizers.AdamW(LEARNING_RATE, weight_decay=0.01,
                                                       global_clipnorm=1.0),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    dataset = tf.data.Dataset.from_tensor_slices((sentences, labels))
    dataset = dataset.shuffle(len(sentences), seed=0).repeat().batch(batch_size,
                                                                      drop_remainder=True)
    timer = StepsTimer()

    def run():
        model.fit(dataset, epochs=1, steps_per_epoch=num_steps, verbose=0, callbacks=[timer])
        return timer.seconds

    return run


def benchmark_finetune(model_dir, sentences, labels, label_names, batch_size=32,
                       seq_length=128, num_steps=10, dtype="float32", repeats=3,
                       lower_case=True):
    """Examples/s of each runner on `sentences` (a list of str) with int `labels`.

    Returns:
      One dict per runner: `implementation`, `examples_per_s`, `seconds` (median of `repeats`
      turns of `num_steps` steps), `vs_keras_hub` (throughput over the peer's), settings.
    """
    sentences, labels = np.asarray(sentences, object), np.asarray(labels, np.int32)
    task = SentenceTask("bbc_news_sentences", text_a_column="text",
                        label_names=tuple(label_names))
    examples = SentenceExamples(list(sentences), None, labels, list(range(len(labels))), "bbc")
    fixed = BertPreprocessor(vocab_path(model_dir), lower_case=lower_case, seq_length=seq_length)
    longest = BertPreprocessor(vocab_path(model_dir), lower_case=lower_case,
                               seq_length=seq_length, padding="longest")
    runners = {}
    for name, preprocessor in (("bert_tf longest", longest), ("bert_tf fixed", fixed)):
        adapter = classifier_adapter(task, preprocessor, train=examples, batch_size=batch_size)
        runners[name] = _ours(model_dir, adapter.train_batches(batch_size, 0), adapter,
                              num_steps, dtype, batch_size)
    return timed_beside_keras_hub(runners, "finetune", model_dir, sentences, labels,
                                  len(label_names), num_steps, dtype, batch_size, seq_length,
                                  lower_case, repeats)


def timed_beside_keras_hub(runners, what, model_dir, sentences, labels, num_classes, num_steps,
                           dtype, batch_size, seq_length, lower_case, repeats):
    """Adds keras-hub's `fit` (where installed) to `runners`, times all in turns, and returns
    one row per runner with examples/s and the ratio to keras-hub."""
    try:
        runners[KERAS_HUB_PEER] = keras_hub_fit_runner(
            model_dir, sentences, labels, num_classes, num_steps, dtype, batch_size,
            seq_length, lower_case)
    except ImportError:
        pass
    seconds = interleaved_median_seconds(runners, repeats=repeats)
    peer = seconds.get(KERAS_HUB_PEER)
    return [{"implementation": name, "what": what, "dtype": dtype,
             "batch_size": batch_size, "seq_length": seq_length, "steps": num_steps,
             "seconds": s, "examples_per_s": batch_size * num_steps / s,
             "vs_keras_hub": peer / s if peer else None} for name, s in seconds.items()]
