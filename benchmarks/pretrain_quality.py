"""Learning curves at equal steps: our MLM-only pretraining against keras-hub's `BertMaskedLM.fit`.

Both train on the same google-research-format records (read by our `pretraining_dataset`, so
both see the same batches in the same order), with the same model shape, batch, schedule
(`WarmupLinearDecay`), AdamW (weight decay 0.01 off LayerNorm and biases, global-norm clip
1.0) and steps. Held-out masked-LM accuracy and loss mean the same for both: token-weighted
over the real predictions (`masked_lm_weights`), in eval mode (ours from the run's own
evaluation, keras-hub's from `heldout_mlm_metrics`).
Differences that remain: keras-hub's training loss is the mean over all P prediction slots
(Keras' `sum_over_batch_size`), ours the per-example mean over real predictions; keras-hub
uses one dropout rate for hidden and attention dropout (both 0.1 in our configs).
"""

import dataclasses
import glob
import os
import shutil

import tensorflow as tf

from benchmarks import TOOLS_DIR
from benchmarks.keras_hub_peer import keras_hub_backbone
from bert_tf.data.pipelines.pretraining_dataset import pretraining_dataset
from bert_tf.training.optimization import NO_WEIGHT_DECAY, WarmupLinearDecay
from bert_tf.training.pretraining_runner import PretrainingOptions, run_pretraining


@dataclasses.dataclass
class QualitySettings:
    """One comparison: model shape, records, schedule and how often to evaluate."""

    bert_config_file: str
    train_records: str
    heldout_records: str
    work_dir: str
    num_steps: int = 1000
    num_warmup_steps: int = 100
    learning_rate: float = 1e-3
    batch_size: int = 32
    seq_length: int = 128
    max_predictions_per_seq: int = 20
    eval_every_steps: int = 250


def heldout_mlm_metrics(logits_fn, heldout_records, seq_length, max_predictions_per_seq):
    """Token-weighted masked-LM accuracy and loss of `logits_fn(batch) -> [B, P, V]` on the
    records."""
    correct = loss = count = 0.0
    for batch in pretraining_dataset(heldout_records, 64, seq_length, max_predictions_per_seq,
                                     is_training=False, use_next_sentence=False):
        logits = tf.cast(logits_fn(batch), tf.float32)
        labels, weights = batch["masked_lm_ids"], batch["masked_lm_weights"]
        token_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        hits = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32)
        correct += float(tf.reduce_sum(hits * weights))
        loss += float(tf.reduce_sum(token_loss * weights))
        count += float(tf.reduce_sum(weights))
    return {"mlm_accuracy": correct / count, "mlm_loss": loss / count}


def _train_batches(settings, seed):
    return pretraining_dataset(settings.train_records, settings.batch_size, settings.seq_length,
                               settings.max_predictions_per_seq, is_training=True, seed=seed,
                               use_next_sentence=False)


def run_bert_tf(settings, seed):
    """Our pretrainer, `--no_nsp`, through `run_pretraining`; returns {step: held-out metrics}."""
    output_dir = os.path.join(settings.work_dir, f"bert_tf_seed{seed}")
    shutil.rmtree(output_dir, ignore_errors=True)  # A fresh run, not a resume of the last one.
    options = PretrainingOptions(bert_config_file=settings.bert_config_file,
                                 input_file=settings.train_records,
                                 eval_input_file=settings.heldout_records, output_dir=output_dir,
                                 no_nsp=True, train_batch_size=settings.batch_size,
                                 eval_batch_size=64, max_seq_length=settings.seq_length,
                                 max_predictions_per_seq=settings.max_predictions_per_seq,
                                 learning_rate=settings.learning_rate,
                                 num_train_steps=settings.num_steps,
                                 num_warmup_steps=settings.num_warmup_steps,
                                 save_checkpoints_steps=settings.num_steps,
                                 eval_every_steps=settings.eval_every_steps, max_eval_steps=10000,
                                 steps_per_loop=settings.eval_every_steps, seed=seed)
    run_pretraining(options)
    return _eval_scalars(os.path.join(output_dir, "eval"))


def _eval_scalars(eval_dir):
    """{step: {mlm_accuracy, mlm_loss}} from the run's TensorBoard eval summaries."""
    curve = {}
    for path in sorted(glob.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag in ("mlm_accuracy", "mlm_loss"):
                    metrics = curve.setdefault(event.step, {})
                    metrics[value.tag] = float(tf.make_ndarray(value.tensor))
    return curve


def run_keras_hub(settings, config, seed):
    """keras-hub `BertMaskedLM` trained by `fit` on the same batches; returns {step: held-out
    metrics}.

    Raises:
      ImportError: keras-hub is not installed (`pip install keras-hub`).
    """
    import keras
    import keras_hub

    keras.utils.set_random_seed(seed)
    backbone = keras_hub_backbone(config)
    model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
    schedule = WarmupLinearDecay(settings.learning_rate, settings.num_steps,
                                 settings.num_warmup_steps)
    optimizer = keras.optimizers.AdamW(schedule, weight_decay=0.01, global_clipnorm=1.0,
                                       epsilon=1e-6)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def features(batch):
        return {"token_ids": batch["input_word_ids"], "segment_ids": batch["input_type_ids"],
                "padding_mask": batch["input_mask"], "mask_positions": batch["masked_lm_positions"]}

    data = _train_batches(settings, seed).map(
        lambda batch: (features(batch), batch["masked_lm_ids"], batch["masked_lm_weights"]))
    curve = {}

    class HeldOut(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            curve[(epoch + 1) * settings.eval_every_steps] = heldout_mlm_metrics(
                lambda batch: model(features(batch), training=False), settings.heldout_records,
                settings.seq_length, settings.max_predictions_per_seq)

    # One epoch per evaluation; Keras keeps the iterator across epochs of an endless dataset.
    model.fit(data, epochs=settings.num_steps // settings.eval_every_steps,
              steps_per_epoch=settings.eval_every_steps, verbose=0, callbacks=[HeldOut()])
    return curve


def make_records(text_file, output_file, vocab_file, dupe_factor, seed=12345):
    """Runs `tools/create_pretraining_data.py` once (seq 128, P 20); later calls reuse the file."""
    import subprocess
    import sys

    if not os.path.exists(output_file):
        tool = os.path.join(TOOLS_DIR, "create_pretraining_data.py")
        subprocess.run([sys.executable, tool, f"--input_file={text_file}",
                        f"--output_file={output_file}", f"--vocab_file={vocab_file}",
                        "--max_seq_length=128", "--max_predictions_per_seq=20",
                        f"--dupe_factor={dupe_factor}", f"--random_seed={seed}"], check=True)
    return output_file


def compare(settings, config, seeds):
    """Yields one row per (implementation, seed, evaluated step): held-out accuracy and loss."""
    for seed in seeds:
        curves = {"bert_tf (no_nsp)": run_bert_tf(settings, seed)}
        try:
            curves["keras_hub BertMaskedLM.fit"] = run_keras_hub(settings, config, seed)
        except ImportError as error:
            yield {"implementation": "keras_hub", "error": f"not installed ({error})"}
        for name, curve in curves.items():
            for step, metrics in sorted(curve.items()):
                yield {"implementation": name, "seed": seed, "step": step, **metrics}
