"""Fine-tuning driver shared by every task: epochs of the shared train loop, official metrics
on dev after each epoch, the best epoch kept as a model directory, predictions.

A task supplies a `TaskAdapter` (its model head, loss, batches, evaluation and prediction
writers); this module owns the schedule: AdamW with linear warm-up over
`warmup_proportion` of all steps, `bert_tf.training.run_training` for each epoch (so a rerun
resumes from the newest checkpoint in `output_dir`), and `output_dir/model/` written with
`write_model_dir` whenever the dev metric improves (the last epoch when there is no dev set).
"""

import json
import math
import os
import time

import keras
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.model_dir import (
    read_config,
    read_model_info,
    restore_model_dir,
    write_model_dir,
)
from bert_tf.dtype_policy import policy_scope
from bert_tf.errors import UserError
from bert_tf.finetuning.eval_history import best_metric, load_history, save_history
from bert_tf.finetuning.options import MODEL_SUBDIR, check_finetuning_options
from bert_tf.layers.packing import training_attention_groups
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.training.checkpointing import disk_full_is_a_user_error, variables_bytes
from bert_tf.training.distribution import get_strategy, is_chief, lost_worker_is_a_user_error
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.train_loop import Trainer, run_training

RESULTS_FILE = "eval_results.json"


class FinetuningError(UserError, ValueError):
    """A run that cannot do what it was asked: no step to train, no fine-tuned head to score."""


def _schedule(options, adapter):
    """(total steps, the step at which each epoch ends)."""
    global_batch = options.train_batch_size
    steps_per_epoch = adapter.num_train_examples / global_batch
    total = int(steps_per_epoch * options.num_train_epochs)
    if total < 1:
        raise FinetuningError(
            f"{adapter.num_train_examples} training examples, batch size {global_batch} and "
            f"{options.num_train_epochs} epochs make no step; lower --train_batch_size or raise "
            "--num_train_epochs.")
    ends = [min(total, int(round(steps_per_epoch * (e + 1))))
            for e in range(math.ceil(options.num_train_epochs))]
    return total, sorted(set(ends))


def num_train_steps(options, adapter):
    """The step at which training ends: `num_train_epochs` epochs of the task's examples."""
    return _schedule(options, adapter)[0]


def check_run(adapter, options, do_train=True, do_eval=True, do_predict=False):
    """`check_finetuning_options`, then what needs the task's data: that training has data and
    makes at least one step. Raises a `UserError` before anything is written."""
    check_finetuning_options(options, do_train, do_eval, do_predict)
    if do_train:
        if adapter.train_batches is None:
            raise FinetuningError("--do_train needs training data.")
        _schedule(options, adapter)


def load_finetuned(model_dir, adapter):
    """Builds the task model and restores encoder and head from a fine-tuned model directory.

    Raises:
      FinetuningError: the directory has no head for this task (e.g. a pretrained encoder
        only), or its label names differ from the task's.
    """
    info = read_model_info(model_dir)
    if info.get("head") != adapter.info["head"]:
        raise FinetuningError(
            f"Model directory {model_dir} holds no fine-tuned {adapter.info['head']} head (its "
            f"model_info.json says head={info.get('head')!r}); fine-tune it first with "
            "--do_train.")
    expected = adapter.info.get("label_names")
    if expected is not None and info.get("label_names") != list(expected):
        raise FinetuningError(f"Model directory {model_dir} was fine-tuned with labels "
                              f"{info.get('label_names')}, not {list(expected)}.")
    model = adapter.build_model(BertEncoder(read_config(model_dir)))
    restore_model_dir(model_dir, **model.checkpoint_items())
    return model


def training_strategy(options):
    """`options.distribution_strategy`'s `tf.distribute` strategy, with its collective timeout.

    A multi-worker one must exist before TensorFlow runs its first op: an entry point calls
    this before reading any data and passes the strategy to `run_finetuning`.
    """
    return get_strategy(options.distribution_strategy,
                        collective_timeout_seconds=options.collective_timeout_seconds)


def run_finetuning(adapter, options, do_train=True, do_eval=True, do_predict=False,
                   progress_fn=None, strategy=None):
    """Fine-tunes, evaluates and predicts as asked; returns `{"history": [...], "eval": {...}}`.

    Runs under the Keras dtype policy `options.dtype` (`mixed_bfloat16` is ~4x faster on CPUs
    with AMX/AVX512-BF16; heads output float32 either way) and restores the previous one.

    Args:
      adapter: the task's `TaskAdapter`.
      options: `FinetuningOptions`, checked with `check_run` first.
      do_train, do_eval, do_predict: what to run.
      progress_fn: called with a `bert_tf.training.TrainProgress` after every loop call.
      strategy: the training's `tf.distribute.Strategy`; None builds
        `training_strategy(options)` (an entry point builds it before reading the data).

    Raises:
      WorkerLostError: a worker of a multi-worker run died or hangs (rerun them all).
    """
    check_run(adapter, options, do_train, do_eval, do_predict)
    with policy_scope(options.dtype):
        keras.utils.set_random_seed(options.seed)
        tf.io.gfile.makedirs(options.output_dir)
        model_dir = os.path.join(options.output_dir, MODEL_SUBDIR)
        result = {"history": [], "eval": {}}
        written = None
        if do_train:
            strategy = strategy or training_strategy(options)
            with lost_worker_is_a_user_error(strategy, options.collective_timeout_seconds):
                result["history"], written = _train(adapter, options, model_dir, do_eval,
                                                    progress_fn, strategy)
        # The other workers of a multi-worker run train beside the chief and write nothing.
        if not (do_eval or do_predict) or not is_chief(strategy):
            return result
        source = model_dir if tf.io.gfile.exists(model_dir) else options.model_dir
        # When training just wrote the model directory from the model in memory, that model
        # and its last dev evaluation serve: rebuilding, restoring, re-tracing and scoring the
        # same weights on the same dev set again took ~10 s of a MiniLM WNUT-16 run.
        model = load_finetuned(source, adapter) if written is None else written
        if do_eval and adapter.evaluate is not None:
            result["eval"] = (adapter.evaluate(model) if written is None
                              else result["history"][-1]["metrics"])
            logging.info("Eval of %s: %s", source, result["eval"])
            with tf.io.gfile.GFile(os.path.join(options.output_dir, RESULTS_FILE), "w") as f:
                json.dump(result["eval"], f, indent=2)
        if do_predict and adapter.predict is not None:
            result["predictions"] = adapter.predict(model, options.output_dir)
    return result


def _train(adapter, options, model_dir, do_eval, progress_fn, strategy):
    """Trains epoch by epoch; returns the history with each epoch's dev metrics, and the model
    when its last epoch, trained here, was written as `model_dir` (else None). Only the chief
    of a multi-worker run writes."""
    bert_config = options.bert_config()
    total, epoch_ends = _schedule(options, adapter)
    chief = is_chief(strategy)
    with strategy.scope():
        model = adapter.build_model(BertEncoder(
            bert_config, packed_training=options.packs_training,
            training_attention_groups=training_attention_groups(options.max_seq_length)))
        optimizer = create_optimizer(
            "adamw", options.learning_rate, total, int(total * options.warmup_proportion),
            weight_decay=options.weight_decay, dtype=options.dtype)
    global_batch = options.train_batch_size
    trainer = Trainer(strategy, model, adapter.loss_fn(global_batch), optimizer)

    def dataset_fn(context, skip_batches):
        batch_size = context.get_per_replica_batch_size(global_batch)
        return adapter.train_batches(batch_size, skip_batches)

    history = load_history(options.output_dir)
    done = {entry["step"] for entry in history}
    evaluate = do_eval and adapter.evaluate is not None
    written = None
    for epoch, end in enumerate(epoch_ends, start=1):
        written = None
        if end in done:
            continue
        started = time.perf_counter()
        step = run_training(
            trainer, dataset_fn, global_batch, end, options.output_dir, model.checkpoint_items(),
            steps_per_loop=options.steps_per_loop,
            save_checkpoints_steps=options.save_checkpoints_steps,
            init_checkpoint=options.warm_start(), progress_fn=progress_fn).step
        seconds = time.perf_counter() - started
        if step != end:  # resumed past this epoch's end without its evaluation on record
            logging.warning("Resumed at step %d, past the end of epoch %d (step %d): not "
                            "evaluating that epoch.", step, epoch, end)
            continue
        entry = {"epoch": epoch, "step": step, "train_seconds": seconds}
        if evaluate:
            # On every worker (no collectives): one that went on alone would wait at the next
            # step's all-reduce, and a long evaluation would outlast the collective timeout.
            entry["metrics"] = adapter.evaluate(model)
            logging.info("Epoch %d (step %d, %.0fs): %s", epoch, step, seconds, entry["metrics"])
        if not chief:
            history.append(entry)
            continue
        if not evaluate or entry["metrics"][adapter.main_metric] > \
                best_metric(history, adapter.main_metric):
            info = dict(adapter.info, step=step, epoch=epoch,
                        max_seq_length=options.max_seq_length,
                        do_lower_case=options.do_lower_case, dev_metrics=entry.get("metrics"))
            items = model.checkpoint_items()
            with disk_full_is_a_user_error(model_dir, lambda: variables_bytes(items.values())):
                write_model_dir(model_dir, bert_config, options.vocab(), info=info, **items)
            entry["best"] = True
            written = model
        history.append(entry)
        save_history(options.output_dir, history)
    return history, written
