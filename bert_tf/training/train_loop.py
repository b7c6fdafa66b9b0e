"""The custom training loop: `steps_per_loop` steps per `tf.function` call under a strategy.

Task-agnostic: pretraining and fine-tuning give a model, a `loss_fn` and dataset functions.
One call of the compiled loop function runs up to `steps_per_loop` distributed steps in a
`tf.range` loop (one host round trip per loop, not per step), stops early at a non-finite
loss, and returns summed metrics. Between calls the host saves checkpoints, evaluates,
writes TensorBoard scalars and reports progress.
"""

import dataclasses
import os
import signal
import threading
import time

import tensorflow as tf
from absl import logging
from tensorflow.core.framework import summary_pb2

from bert_tf.errors import StoppedBySignal, UserError
from bert_tf.training.checkpointing import (
    TrainingCheckpoint,
    check_output_dir,
    restore_init_checkpoint,
)
from bert_tf.training.distribution import check_batch_split, is_chief
from bert_tf.training.optimization import current_learning_rate
from bert_tf.training.train_step import ReplicaTrainStep, replica_eval_step

# tf.summary.scalar lives in the tensorboard package, not a dependency here; this is the
# scalar plugin's metadata that it would attach, so TensorBoard shows the same charts.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


class NonFiniteLossError(UserError, RuntimeError):
    """The loss became NaN or Inf; `step` names it, `checkpoint` is the last good one."""

    def __init__(self, step, checkpoint):
        self.step, self.checkpoint = step, checkpoint
        super().__init__(f"Loss is NaN or Inf at step {step}; stopped without saving. The last "
                         f"good checkpoint is {checkpoint or 'none (no checkpoint yet)'}; lower "
                         "the learning rate or check the data, then rerun to resume from it.")


class TrainingStopped(StoppedBySignal):
    """SIGTERM or SIGINT stopped the run; `checkpoint` was saved at `step` to resume from."""

    def __init__(self, signal_name, step, checkpoint):
        self.signal_name, self.step, self.checkpoint = signal_name, step, checkpoint
        self.exit_code = 128 + (signal.SIGINT if signal_name == "SIGINT" else signal.SIGTERM)
        super().__init__(f"Stopped by {signal_name} at step {step}; saved checkpoint "
                         f"{checkpoint}. Rerun the same command to resume from it.")


class _StopSignals:
    """While active, SIGTERM and SIGINT set a flag that the loop reads between loop calls.

    SIGTERM is what preemptible VMs, TPU maintenance, Kubernetes and Slurm send before a
    kill; the loop then saves at the current step and raises `TrainingStopped`. A signal
    that arrives during that save only sets the flag again, so the save finishes and the
    newest checkpoint is never half written. Outside the main thread (where Python cannot
    install handlers) signals keep their default behaviour.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.received = None
        self._previous = {}

    def _handle(self, signum, frame):
        del frame
        self.received = self.received or signal.Signals(signum).name

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc_info):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def agreed(self, strategy):
        """Whether any worker received a signal (a collective: every worker calls it)."""
        if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
            return self.received is not None
        flags = strategy.experimental_distribute_values_from_function(
            lambda _: tf.constant(0.0 if self.received is None else 1.0))
        stop = float(strategy.reduce(tf.distribute.ReduceOp.SUM, flags, axis=None)) > 0
        if stop and self.received is None:
            self.received = "a signal to another worker"
        return stop


@dataclasses.dataclass
class TrainProgress:
    """What a progress callback receives after each loop call."""
    step: int
    num_steps: int
    loss: float
    metrics: dict
    learning_rate: float
    sequences_per_second: float
    eta_seconds: float
    elapsed_seconds: float


@dataclasses.dataclass
class TrainResult:
    step: int
    train_metrics: dict
    eval_metrics: dict
    checkpoint: str


def _ratios(sums):
    return {name: float(num) / max(float(den), 1e-12) for name, (num, den) in sums.items()}


# A pipeline starts making batches when its iterator is created, not at the first batch: a text
# run's first training batch (reading and tokenizing the corpus, ~4 s for the demo's) is then
# made while the loop function traces, instead of after it. (A MultiDeviceIterator still starts
# its per-device pipelines at the first batch.)
_WARM_START = tf.data.Options()
_WARM_START.experimental_warm_start = True


def _distribute(strategy, dataset_fn, skip_steps=None):
    """Per-pipeline datasets, told to skip the batches that `skip_steps` steps consumed, each
    started as soon as its iterator is created.

    One CPU device reads the dataset itself: tf.distribute would put a MultiDeviceIterator
    between them, whose per-device pipeline runs tf.data's autotuning thread (its options
    are TensorFlow's, not ours), and deleting it at the end of a run stood idle for up to
    ~50 s on 2 cores; the copy to "another" device is a no-op on the CPU anyway.
    """

    def fn(context):
        if skip_steps is None:
            dataset = dataset_fn(context)
        else:
            per_pipeline = context.num_replicas_in_sync // context.num_input_pipelines
            dataset = dataset_fn(context, skip_steps * per_pipeline)
        return dataset.with_options(_WARM_START)

    if _is_one_cpu(strategy):
        return fn(tf.distribute.InputContext())
    return strategy.distribute_datasets_from_function(fn)


def _is_one_cpu(strategy):
    devices = strategy.extended.worker_devices
    return (isinstance(strategy, tf.distribute.OneDeviceStrategy)
            and tf.DeviceSpec.from_string(devices[0]).device_type == "CPU")


def _first_batches(dataset_fn, max_steps):
    """`dataset_fn` cut to `max_steps` global batches and cached in memory (None: all, uncached)."""
    if max_steps is None:
        return dataset_fn

    def fn(context):
        per_pipeline = context.num_replicas_in_sync // context.num_input_pipelines
        return dataset_fn(context).take(max_steps * per_pipeline).cache()

    return fn


class Trainer:
    """Builds the compiled loop and eval functions for a model built under `strategy.scope()`.

    Args:
      strategy: a `tf.distribute.Strategy` (see `distribution.get_strategy`).
      model: Keras model; `model(batch inputs, training=...)` gives what `loss_fn` reads.
      loss_fn: `loss_fn(batch, outputs) -> (loss, metrics)`: `loss` = sum of per-example
        losses / global batch size (`tf.nn.compute_average_loss`), `metrics` = dict of
        `(numerator, denominator)` sums, e.g. `{"accuracy": (correct, count)}`.
      optimizer: a Keras optimizer created under the scope.
      gradient_accumulation_steps: micro-batches per update.
      jit_compile: XLA-compile the replica step (single-device strategies only on CPU).
      step_class: the replica step, `ReplicaTrainStep` or a subclass with its own
        `_gradients` (a contrastive loss's step embeds and gathers texts itself).
    """

    def __init__(self, strategy, model, loss_fn, optimizer, gradient_accumulation_steps=1,
                 jit_compile=False, step_class=ReplicaTrainStep):
        several_cpus = (strategy.num_replicas_in_sync > 1
                        and not tf.config.list_logical_devices("GPU"))
        if jit_compile and several_cpus:
            raise ValueError("jit_compile (XLA) inside strategy.run over several CPU devices is "
                             "not supported by TensorFlow; use one_device or drop --enable_xla.")
        self.strategy, self.model = strategy, model
        self.loss_fn, self.optimizer = loss_fn, optimizer
        self.gradient_accumulation_steps = gradient_accumulation_steps
        with strategy.scope():
            optimizer.build(model.trainable_variables)
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        step = step_class(model, loss_fn, optimizer, gradient_accumulation_steps)
        self._replica_train = tf.function(step, jit_compile=True) if jit_compile else step
        self._replica_eval = replica_eval_step(model, loss_fn)
        # The loop calls one traced step function twice (first step, loop body): one trace.
        # Not under MultiWorkerMirrored: its collectives in a nested function inside the
        # while loop fail at run time ("must feed a value for placeholder").
        nested = not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)
        self._step_fn = tf.function(self._step) if nested else self._step
        self.loop_fn = tf.function(self._loop)
        self.eval_fn = tf.function(self._eval)
        self._held_out, self._first_pass = {}, {}

    def _reduce(self, values):
        return tf.nest.map_structure(
            lambda v: self.strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None), values)

    def _step(self, batch):
        return self._reduce(self.strategy.run(self._replica_train, (batch,)))

    def _loop(self, iterator, num_steps):
        # The first step runs before the loop so that the metric sums have their structure.
        loss, metrics = self._step_fn(next(iterator))
        self.step.assign_add(1)
        total, bad_step = loss, tf.where(tf.math.is_finite(loss), tf.constant(-1, tf.int64),
                                         self.step)
        done = tf.constant(1, tf.int32)
        for _ in tf.range(1, num_steps):
            if bad_step >= 0:
                break
            loss, step_metrics = self._step_fn(next(iterator))
            self.step.assign_add(1)
            bad_step = tf.where(tf.math.is_finite(loss), bad_step, self.step)
            total += loss
            metrics = tf.nest.map_structure(tf.add, metrics, step_metrics)
            done += 1
        return total / tf.cast(done, tf.float32), metrics, bad_step, done

    def _eval(self, batch):
        return self._reduce(self.strategy.run(self._replica_eval, (batch,)))

    def evaluate(self, dataset_fn, max_steps=None):
        """Metric ratios over `max_steps` batches of `dataset_fn` (all of it if None).

        With `max_steps`, the batches are read on the first call and kept in memory for the
        next calls with the same `dataset_fn`: a text run's held-out pipeline re-read and
        re-tokenized its whole file before the first batch of every evaluation (~3 s of each
        of the demo's evaluations, against ~0.3 s for the model on 10 batches).
        """
        self.start_reading(dataset_fn, max_steps)
        key = (dataset_fn, max_steps)
        batches = self._first_pass.pop(key) if key in self._first_pass else self._held_out[key]
        sums, count = None, 0
        for batch in batches:
            _, metrics = self.eval_fn(batch)
            sums = metrics if sums is None else tf.nest.map_structure(tf.add, sums, metrics)
            count += 1
        if count == 0:
            raise ValueError("The evaluation dataset is empty.")
        return _ratios(sums)

    def start_reading(self, dataset_fn, max_steps=None):
        """Starts the pipeline of `evaluate(dataset_fn, max_steps)` now and traces its step.

        The first evaluation then iterates an iterator whose pipeline is already at work (a
        run calls this before training, so the demo's held-out file is read and tokenized,
        ~3 s, while the train step traces); later ones the dataset (its batches kept in memory
        with `max_steps`).
        """
        key = (dataset_fn, max_steps)
        if key not in self._held_out:
            batches = _distribute(self.strategy, _first_batches(dataset_fn, max_steps))
            if isinstance(batches, tf.data.Dataset):
                # One trace for full batches and the last partial one (a second took ~1 s).
                self.eval_fn.get_concrete_function(tf.nest.map_structure(
                    lambda spec: tf.TensorSpec([None, *spec.shape[1:]], spec.dtype),
                    batches.element_spec))
            self._held_out[key] = batches
            self._first_pass[key] = iter(batches)


def run_training(trainer, train_dataset_fn, global_batch_size, num_train_steps, output_dir,
                 checkpoint_items, steps_per_loop=1, save_checkpoints_steps=1000,
                 max_checkpoints_to_keep=5, init_checkpoint=None, eval_dataset_fn=None,
                 eval_every_steps=None, max_eval_steps=None, progress_fn=None):
    """Trains to `num_train_steps`, resuming from the newest checkpoint in `output_dir`.

    Args:
      trainer: a `Trainer`.
      train_dataset_fn: `fn(input_context, skip_batches) -> tf.data.Dataset` of per-replica
        batches (`input_context.get_per_replica_batch_size(global_batch_size)`), repeating
        and in a deterministic order, without its first `skip_batches` batches (those that
        this input pipeline fed before a resume; `dataset.skip(skip_batches)` will do).
      global_batch_size: sequences per update over all replicas.
      num_train_steps: the final step.
      output_dir: checkpoints (`ckpt-<step>`) and TensorBoard summaries (`train/`, `eval/`).
      checkpoint_items: model trackables keyed by checkpoint name (`encoder`, heads).
      steps_per_loop: steps per compiled loop call (and per progress report).
      save_checkpoints_steps: checkpoint interval (a loop call never runs past it).
      init_checkpoint: model directory or prefix to warm-start `checkpoint_items` from when
        `output_dir` holds no checkpoint yet.
      eval_dataset_fn, eval_every_steps, max_eval_steps: held-out evaluation every K steps
        and at the end (a `Trainer.evaluate` of at most `max_eval_steps` batches).
      progress_fn: called with a `TrainProgress` after every loop call.

    Returns:
      A `TrainResult` (final step, last train metrics, final eval metrics, last checkpoint).

    Raises:
      NonFiniteLossError: the loss became NaN/Inf (nothing is saved past the last good step).
      TrainingStopped: SIGTERM or SIGINT arrived; a checkpoint of the current step was saved
        first (on every worker of a multi-worker run: they agree after each loop call).
      DiskFullError: a checkpoint did not fit; the newest one is the last complete one.
    """
    strategy = trainer.strategy
    check_batch_split(global_batch_size, strategy.num_replicas_in_sync,
                      trainer.gradient_accumulation_steps)
    check_output_dir(output_dir)
    checkpoint, last_saved = _resume(trainer, output_dir, checkpoint_items,
                                     max_checkpoints_to_keep, init_checkpoint)
    start = step = int(trainer.step.numpy())
    iterator = iter(_distribute(strategy, train_dataset_fn, start))
    if eval_dataset_fn is not None:
        trainer.start_reading(eval_dataset_fn, max_eval_steps)
    scalars = _Scalars(output_dir, is_chief(strategy))
    evaluate_every = eval_every_steps if eval_dataset_fn else None
    train_metrics, eval_metrics = {}, {}
    started = time.perf_counter()
    # SIGTERM/SIGINT only set a flag while the loop runs; it is read between loop calls.
    with _StopSignals() as stop:
        while step < num_train_steps:
            count = _steps_to_next_stop(step, num_train_steps, steps_per_loop,
                                        (save_checkpoints_steps, evaluate_every))
            loop_start = time.perf_counter()
            loss, sums, bad_step, done = trainer.loop_fn(iterator, tf.constant(count, tf.int32))
            if int(bad_step) >= 0:
                raise NonFiniteLossError(int(bad_step), checkpoint.latest)
            step = int(trainer.step.numpy())
            seconds = time.perf_counter() - loop_start
            learning_rate = float(current_learning_rate(trainer.optimizer))  # of the next step
            train_metrics = {"loss": float(loss), **_ratios(sums)}
            scalars.write("train", step, {**train_metrics, "learning_rate": learning_rate})
            if progress_fn is not None:
                elapsed = time.perf_counter() - started
                progress_fn(TrainProgress(
                    step, num_train_steps, float(loss), train_metrics, learning_rate,
                    int(done) * global_batch_size / seconds,
                    elapsed / (step - start) * (num_train_steps - step), elapsed))
            saved_now = step % save_checkpoints_steps == 0 or step == num_train_steps
            if saved_now:
                last_saved = checkpoint.save() or last_saved
            if stop.agreed(strategy):
                if not saved_now:
                    last_saved = checkpoint.save() or last_saved
                raise TrainingStopped(stop.received, step, last_saved or output_dir)
            if evaluate_every and step % evaluate_every == 0 and step < num_train_steps:
                eval_metrics = _evaluate(trainer, eval_dataset_fn, max_eval_steps, step, scalars)
    if eval_dataset_fn is not None:
        eval_metrics = _evaluate(trainer, eval_dataset_fn, max_eval_steps, step, scalars)
    scalars.flush()
    return TrainResult(step=step, train_metrics=train_metrics, eval_metrics=eval_metrics,
                       checkpoint=last_saved)


def _resume(trainer, output_dir, checkpoint_items, max_checkpoints_to_keep, init_checkpoint):
    """The run's checkpoint manager and the newest intact checkpoint restored (or a warm start)."""
    checkpoint = TrainingCheckpoint(trainer.strategy, output_dir, checkpoint_items,
                                    trainer.optimizer, trainer.step, max_checkpoints_to_keep)
    last_saved = checkpoint.restore_latest()
    if last_saved is not None:
        logging.info("Learning rate from step %d: %.3g.", int(trainer.step.numpy()),
                     float(current_learning_rate(trainer.optimizer)))
    if last_saved is None and init_checkpoint:
        restore_init_checkpoint(init_checkpoint, checkpoint_items)
    return checkpoint, last_saved


def _steps_to_next_stop(step, num_train_steps, steps_per_loop, intervals):
    """Steps for the next loop call: at most `steps_per_loop`, never past a save or eval."""
    limit = min([num_train_steps] + [(step // k + 1) * k for k in intervals if k])
    return min(steps_per_loop, limit - step)


def _evaluate(trainer, eval_dataset_fn, max_eval_steps, step, scalars):
    metrics = trainer.evaluate(eval_dataset_fn, max_eval_steps)
    scalars.write("eval", step, metrics)
    logging.info("held-out at step %d: %s", step,
                 " ".join(f"{name}={value:.4f}" for name, value in metrics.items()))
    return metrics


class _Scalars:
    """TensorBoard scalars under `output_dir/train` and `output_dir/eval` (chief only)."""

    def __init__(self, output_dir, chief):
        self.writers = {name: tf.summary.create_file_writer(os.path.join(output_dir, name))
                        if chief else tf.summary.create_noop_writer()
                        for name in ("train", "eval")}

    def write(self, name, step, values):
        with self.writers[name].as_default(step=step):
            for key, value in values.items():
                tf.summary.write(key, tf.constant(value, tf.float32), metadata=_SCALAR_METADATA)

    def flush(self):
        for writer in self.writers.values():
            writer.flush()
