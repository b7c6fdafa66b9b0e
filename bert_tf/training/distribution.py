"""tf.distribute strategies by name: one_device, mirrored, multi_worker_mirrored, tpu."""

import json
import os

import tensorflow as tf

from bert_tf.errors import UserError

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


class StrategyError(UserError, RuntimeError):
    """The strategy asked for cannot run here (e.g. no TPU to reach)."""


def _accelerators():
    """The GPUs, else the CPU devices (several when logical CPU devices are configured)."""
    gpus = tf.config.list_logical_devices("GPU")
    return [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]


def get_strategy(name, tpu_address="", num_gpus=None):
    """Builds the `tf.distribute.Strategy` called `name`.

    Args:
      name: one of `one_device`, `mirrored`, `multi_worker_mirrored`, `tpu`.
      tpu_address: for `tpu`: a TPU name, `grpc://host:port`, or "" / "local" for a TPU VM.
      num_gpus: for `mirrored`: use the first `num_gpus` devices (GPUs, else logical CPUs);
        None uses all of them.

    Returns:
      The strategy. Build models and optimizers under `strategy.scope()`.

    Raises:
      ValueError: unknown name, bad `num_gpus`, or a malformed `TF_CONFIG`.
      StrategyError: the TPU cannot be reached.

    Example:
    >>> strategy = get_strategy("one_device")
    >>> strategy.num_replicas_in_sync
    1
    """
    if name not in STRATEGIES:
        raise ValueError(f"Unknown distribution strategy {name!r}; choose one of {list(STRATEGIES)}.")
    if name == "one_device":
        return tf.distribute.OneDeviceStrategy(_accelerators()[0])
    if name == "mirrored":
        devices = _accelerators()
        if num_gpus is not None:
            if not 1 <= num_gpus <= len(devices):
                raise ValueError(f"num_gpus={num_gpus} but this machine has {len(devices)} "
                                 f"device(s): {devices}.")
            devices = devices[:num_gpus]
        if tf.config.list_logical_devices("GPU"):
            return tf.distribute.MirroredStrategy(devices)
        # Over CPU devices, reduce on one device rather than with collective ops: a second
        # MirroredStrategy in the same process reuses collective instance keys and fails
        # with "Shape mismatch in the collective instance".
        return tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
    if name == "multi_worker_mirrored":
        _check_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    return _tpu_strategy(tpu_address)


def _check_tf_config():
    """MultiWorkerMirroredStrategy reads TF_CONFIG; a typo there hangs it, so check first."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return  # A single worker: MWMS runs locally.
    try:
        config = json.loads(raw)
        workers = config["cluster"]["worker"]
        task = config["task"]
        index = int(task["index"])
    except (ValueError, KeyError, TypeError) as error:
        example = '{"cluster": {"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}'
        raise ValueError(f"TF_CONFIG must be JSON like {example}; {type(error).__name__}: "
                         f"{error}; received {raw!r}.") from None
    if task.get("type") not in ("worker", "chief") or not 0 <= index < len(workers):
        raise ValueError(f"TF_CONFIG task {task} does not name one of the {len(workers)} workers.")


def _tpu_strategy(tpu_address):
    tpu = "" if tpu_address in ("", "local") else tpu_address
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, tf.errors.OpError) as error:
        reason = " ".join(str(getattr(error, "message", error)).split("\n")[0].split())
        raise StrategyError(f"--distribution_strategy=tpu: cannot reach TPU "
                            f"{tpu_address or 'local'!r} (--tpu): {reason}") from None
    return tf.distribute.TPUStrategy(resolver)


def is_chief(strategy):
    """True on the worker that writes summaries, checkpoints and the model directory."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return True
    task_type, task_id = resolver.task_type, resolver.task_id
    return task_type in (None, "chief") or (task_type == "worker" and task_id == 0
                                             and "chief" not in resolver.cluster_spec().as_dict())


def task_id(strategy):
    resolver = getattr(strategy, "cluster_resolver", None)
    return 0 if resolver is None or resolver.task_id is None else resolver.task_id


def check_batch_split(global_batch_size, num_replicas, gradient_accumulation_steps=1):
    """Raises ValueError unless the global batch splits evenly over replicas and micro-batches."""
    per_replica, remainder = divmod(global_batch_size, num_replicas)
    if remainder or per_replica % gradient_accumulation_steps:
        raise ValueError(
            f"the global batch size {global_batch_size} is not divisible by {num_replicas} "
            f"replica(s) x {gradient_accumulation_steps} gradient accumulation step(s).")
