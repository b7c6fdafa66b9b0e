"""Fine-tuning driver shared by every task: epochs of the shared train loop, official metrics
on dev after each epoch, the best epoch kept as a model directory, predictions.

A task supplies a `TaskAdapter` (its model head, loss, batches, evaluation and prediction
writers); this module owns the schedule: AdamW with linear warm-up over
`warmup_proportion` of all steps, `bert_tf.training.run_training` for each epoch (so a rerun
resumes from the newest checkpoint in `output_dir`), and `output_dir/model/` written with
`write_model_dir` whenever the dev metric improves (the last epoch when there is no dev set).
"""

import dataclasses
import json
import math
import os
import time

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.model_dir import (read_config, read_model_info, restore_model_dir,
                                           vocab_path, write_model_dir)
from bert_tf.configs import BertConfig
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.train_loop import Trainer, run_training

MODEL_SUBDIR = "model"
HISTORY_FILE = "eval_history.json"


@dataclasses.dataclass
class FinetuneConfig:
    """Run settings; the names are google-research `run_classifier.py` flags.

    Give either `model_dir` (bert_config.json + vocab.txt + checkpoint) or `bert_config_file`
    and `vocab_file` (+ `init_checkpoint`, a model directory or checkpoint prefix).
    """

    output_dir: str
    model_dir: str | None = None
    bert_config_file: str | None = None
    vocab_file: str | None = None
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    weight_decay: float = 0.01
    distribution_strategy: str = "one_device"
    steps_per_loop: int = 10
    save_checkpoints_steps: int = 1000
    dtype: str = "float32"
    seed: int = 0

    def bert_config(self):
        if self.model_dir:
            return read_config(self.model_dir)
        if not self.bert_config_file:
            raise ValueError("Give --model_dir, or --bert_config_file and --vocab_file.")
        return BertConfig.from_json_file(self.bert_config_file)

    def vocab(self):
        path = vocab_path(self.model_dir) if self.model_dir else self.vocab_file
        if not path or not tf.io.gfile.exists(path):
            raise FileNotFoundError(f"Vocabulary not found: {path!r} (give --vocab_file or a "
                                    "--model_dir with vocab.txt).")
        return path

    def warm_start(self):
        return self.model_dir or self.init_checkpoint


@dataclasses.dataclass
class TaskAdapter:
    """What one task gives the driver.

    Attributes:
      info: JSON extras for the model directory, e.g. `{"task": "classifier",
        "task_name": "mrpc", "label_names": [...]}`.
      build_model: `encoder -> BertTaskModel`.
      loss_fn: `global_batch_size -> loss_fn(batch, outputs) -> (loss, metrics)` for the loop.
      train_batches: `(batch_size, skip_batches) -> repeating dataset of dict batches` (model
        inputs plus targets), or None when there is no training data.
      num_train_examples: examples (windows, sentences) per epoch.
      evaluate: `model -> {metric: value}` on the dev set with the official metric, or None.
      main_metric: the key of `evaluate`'s result that picks the best epoch (higher is better).
      predict: `(model, output_dir) -> list of written files`, or None.
    """

    info: dict
    build_model: object
    loss_fn: object
    train_batches: object = None
    num_train_examples: int = 0
    evaluate: object = None
    main_metric: str | None = None
    predict: object = None


def predict_outputs(model, dataset):
    """Runs `model` in inference mode over `dataset` (inputs, or (inputs, targets)) → numpy."""
    forward = tf.function(lambda inputs: model(inputs, training=False), reduce_retracing=True)
    outputs = []
    for batch in dataset:
        inputs = batch[0] if isinstance(batch, tuple) else batch
        outputs.append(tf.nest.map_structure(lambda t: t.numpy(), forward(inputs)))
    if not outputs:
        raise ValueError("No batches to predict on: the dataset is empty.")
    return tf.nest.map_structure(lambda *parts: np.concatenate(parts), *outputs)


def _schedule(config, adapter):
    global_batch = config.train_batch_size
    steps_per_epoch = adapter.num_train_examples / global_batch
    total = int(steps_per_epoch * config.num_train_epochs)
    if total < 1:
        raise ValueError(f"{adapter.num_train_examples} training examples, batch size "
                         f"{global_batch} and {config.num_train_epochs} epochs make no step.")
    ends = [min(total, int(round(steps_per_epoch * (e + 1))))
            for e in range(math.ceil(config.num_train_epochs))]
    return total, sorted(set(ends))


def _load_history(output_dir):
    path = os.path.join(output_dir, HISTORY_FILE)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def _save_history(output_dir, history):
    with tf.io.gfile.GFile(os.path.join(output_dir, HISTORY_FILE), "w") as f:
        json.dump(history, f, indent=2)


def _log_progress(progress):
    logging.info("step %d/%d loss %.4f lr %.3g %.1f seq/s eta %.0fs %s", progress.step,
                 progress.num_steps, progress.loss, progress.learning_rate,
                 progress.sequences_per_second, progress.eta_seconds,
                 {k: round(v, 4) for k, v in progress.metrics.items() if k != "loss"})


def load_finetuned(model_dir, adapter):
    """Builds the task model and restores encoder and head from a fine-tuned model directory.

    Raises:
      ValueError: the directory has no head for this task (e.g. a pretrained encoder only),
        or its label names differ from the task's.
    """
    info = read_model_info(model_dir)
    if info.get("task") != adapter.info["task"]:
        raise ValueError(f"Model directory {model_dir} holds no fine-tuned {adapter.info['task']} "
                         f"head (its model_info.json says task={info.get('task')!r}); fine-tune "
                         "it first with --do_train.")
    expected = adapter.info.get("label_names")
    if expected is not None and info.get("label_names") != list(expected):
        raise ValueError(f"Model directory {model_dir} was fine-tuned with labels "
                         f"{info.get('label_names')}, not {list(expected)}.")
    model = adapter.build_model(BertEncoder(read_config(model_dir)))
    restore_model_dir(model_dir, **model.checkpoint_items())
    return model


def run_finetuning(adapter, config, do_train=True, do_eval=True, do_predict=False):
    """Fine-tunes, evaluates and predicts as asked; returns `{"history": [...], "eval": {...}}`.

    Sets the global Keras dtype policy to `config.dtype` (`mixed_bfloat16` is ~4x faster on CPUs
    with AMX/AVX512-BF16; heads output float32 either way).
    """
    keras.mixed_precision.set_global_policy(config.dtype)
    keras.utils.set_random_seed(config.seed)
    tf.io.gfile.makedirs(config.output_dir)
    model_dir = os.path.join(config.output_dir, MODEL_SUBDIR)
    result = {"history": [], "eval": {}}
    model = None
    if do_train:
        model, result["history"] = _train(adapter, config, model_dir, do_eval)
    if do_eval or do_predict:
        source = model_dir if tf.io.gfile.exists(model_dir) else config.model_dir
        if source is None:
            raise ValueError("Nothing to evaluate: give --do_train or a fine-tuned --model_dir.")
        model = load_finetuned(source, adapter)
    if do_eval and adapter.evaluate is not None:
        result["eval"] = adapter.evaluate(model)
        logging.info("Eval of %s: %s", source, result["eval"])
        with tf.io.gfile.GFile(os.path.join(config.output_dir, "eval_results.json"), "w") as f:
            json.dump(result["eval"], f, indent=2)
    if do_predict and adapter.predict is not None:
        result["predictions"] = adapter.predict(model, config.output_dir)
    return result


def _train(adapter, config, model_dir, do_eval):
    if adapter.train_batches is None:
        raise ValueError("--do_train needs training data.")
    bert_config = config.bert_config()
    total, epoch_ends = _schedule(config, adapter)
    strategy = get_strategy(config.distribution_strategy)
    with strategy.scope():
        model = adapter.build_model(BertEncoder(bert_config))
        optimizer = create_optimizer(
            "adamw", config.learning_rate, total, int(total * config.warmup_proportion),
            weight_decay=config.weight_decay, dtype=config.dtype)
    global_batch = config.train_batch_size
    trainer = Trainer(strategy, model, adapter.loss_fn(global_batch), optimizer)

    def dataset_fn(context, skip_batches):
        batch_size = context.get_per_replica_batch_size(global_batch)
        return adapter.train_batches(batch_size, skip_batches)

    history = _load_history(config.output_dir)
    done = {entry["step"] for entry in history}
    evaluate = do_eval and adapter.evaluate is not None
    for epoch, end in enumerate(epoch_ends, start=1):
        if end in done:
            continue
        started = time.perf_counter()
        step = run_training(
            trainer, dataset_fn, global_batch, end, config.output_dir, model.checkpoint_items(),
            steps_per_loop=config.steps_per_loop,
            save_checkpoints_steps=config.save_checkpoints_steps,
            init_checkpoint=config.warm_start(), progress_fn=_log_progress).step
        seconds = time.perf_counter() - started
        if step != end:  # resumed past this epoch's end without its evaluation on record
            logging.warning("Resumed at step %d, past the end of epoch %d (step %d): not "
                            "evaluating that epoch.", step, epoch, end)
            continue
        entry = {"epoch": epoch, "step": step, "train_seconds": seconds}
        if evaluate:
            entry["metrics"] = adapter.evaluate(model)
            logging.info("Epoch %d (step %d, %.0fs): %s", epoch, step, seconds, entry["metrics"])
        best = max((e["metrics"][adapter.main_metric] for e in history if "metrics" in e),
                   default=-math.inf)
        improved = not evaluate or entry["metrics"][adapter.main_metric] > best
        if improved:
            info = dict(adapter.info, step=step, epoch=epoch, max_seq_length=config.max_seq_length,
                        do_lower_case=config.do_lower_case, dev_metrics=entry.get("metrics"))
            write_model_dir(model_dir, bert_config, config.vocab(), info=info,
                            **model.checkpoint_items())
            entry["best"] = True
        history.append(entry)
        _save_history(config.output_dir, history)
    return model, history
