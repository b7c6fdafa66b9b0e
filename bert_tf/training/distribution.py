"""tf.distribute strategies by name: one_device, mirrored, multi_worker_mirrored, tpu.

A lost worker of a `multi_worker_mirrored` run ends the others in bounded time, each with one
line naming it (`lost_worker_is_a_user_error`). TensorFlow finds it two ways: a worker whose
process died or stopped misses the coordination service's heartbeats (found within about 10
s), or the connection to it breaks; a worker that lives but never joins the next step is
bounded by `collective_timeout_seconds`, the longest any one collective waits. Rerunning
every worker's command resumes from the newest checkpoint.
"""

import contextlib
import json
import os
import re

import tensorflow as tf

from bert_tf.errors import UserError
from bert_tf.options import OptionError

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
# Long enough for the slowest legitimate wait between two steps (a checkpoint of a large model
# written to cloud storage); a worker that never comes is given up on after it.
DEFAULT_COLLECTIVE_TIMEOUT_SECONDS = 300


class StrategyError(UserError, RuntimeError):
    """The strategy asked for cannot run here (e.g. no TPU to reach)."""


class WorkerLostError(UserError):
    """A worker of a multi-worker run died, stopped or stopped answering; rerun them all."""


def _accelerators():
    """The GPUs, else the CPU devices (several when logical CPU devices are configured)."""
    gpus = tf.config.list_logical_devices("GPU")
    return [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]


def get_strategy(name, tpu_address="", num_gpus=None,
                 collective_timeout_seconds=DEFAULT_COLLECTIVE_TIMEOUT_SECONDS):
    """Builds the `tf.distribute.Strategy` called `name`.

    Args:
      name: one of `one_device`, `mirrored`, `multi_worker_mirrored`, `tpu`.
      tpu_address: for `tpu`: a TPU name, `grpc://host:port`, or "" / "local" for a TPU VM.
      num_gpus: for `mirrored`: use the first `num_gpus` devices (GPUs, else logical CPUs);
        None uses all of them.
      collective_timeout_seconds: for `multi_worker_mirrored`: the longest one collective
        (a step's all-reduce) waits for the other workers before it fails.

    Returns:
      The strategy. Build models and optimizers under `strategy.scope()`.

    Raises:
      ValueError: unknown name or bad `num_gpus`; a malformed `TF_CONFIG` is an
        `OptionError` (a `UserError` too) naming --distribution_strategy.
      StrategyError: the TPU cannot be reached.

    Example:
    >>> strategy = get_strategy("one_device")
    >>> strategy.num_replicas_in_sync
    1
    """
    if name not in STRATEGIES:
        raise ValueError(f"Unknown distribution strategy {name!r}; choose one of "
                         f"{list(STRATEGIES)}.")
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
        return tf.distribute.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(
                timeout_seconds=collective_timeout_seconds))
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
        example = ('{"cluster": {"worker": ["host:port", ...]}, '
                   '"task": {"type": "worker", "index": 0}}')
        raise OptionError("distribution_strategy", "multi_worker_mirrored",
                          f"TF_CONFIG must be JSON like {example}; {type(error).__name__}: "
                          f"{error}; received {raw!r}.") from None
    if task.get("type") not in ("worker", "chief") or not 0 <= index < len(workers):
        raise OptionError("distribution_strategy", "multi_worker_mirrored",
                          f"TF_CONFIG task {task} does not name one of the {len(workers)} "
                          "workers.")


_TASK = r"/job:(\w+)/replica:\d+/task:(\d+)"


def lost_worker_message(message, cluster, timeout_seconds, this_task=None):
    """One line for TensorFlow's report of a lost worker, or None if `message` is not one.

    Args:
      message: the error's message (`tf.errors.OpError.message`).
      cluster: `{job: [address, ...]}`, the cluster of `TF_CONFIG`.
      timeout_seconds: the run's collective timeout, named when it was what ran out.
      this_task: `(job, index)` of the worker reporting, to name the other of two.
    """
    def name(job, index):
        addresses = cluster.get(job, [])
        address = f" ({addresses[int(index)]})" if int(index) < len(addresses) else ""
        return f"{job} {index}{address}"

    tasks = [(job, index) for job in cluster for index in range(len(cluster[job]))]
    unhealthy = re.search(r"unhealthy \(stopped sending heartbeats\):((?:\s*" + _TASK + r")+)",
                          message)
    remote = re.search(r"remote target " + _TASK, message)
    if unhealthy:
        lost = [name(*task) for task in re.findall(_TASK, unhealthy.group(1))]
        what = f"{' and '.join(lost)} stopped sending heartbeats (died or stopped)"
    elif remote:
        reason = re.search(r'grpc_message:"([^"]*)"', message)
        what = (f"{name(*remote.groups())} stopped answering"
                f"{f' ({reason.group(1)})' if reason else ''}")
    elif "CoordinationService/Heartbeat" in message:
        leader = "chief" if "chief" in cluster else "worker"
        what = (f"{name(leader, 0)}, which runs the coordination service, stopped answering "
                "heartbeats (died or stopped)")
    elif "Collective has timed out" in message:
        others = [task for task in tasks if task != this_task]
        who = name(*others[0]) if this_task in tasks and len(others) == 1 else "a worker"
        what = (f"{who} did not join a step within --collective_timeout_seconds="
                f"{timeout_seconds} (it hangs, or is far slower than the others)")
    else:
        return None
    return (f"lost a worker of the {len(tasks)}-worker run: {what}. Start every worker's "
            "command again to resume from the newest checkpoint.")


@contextlib.contextmanager
def lost_worker_is_a_user_error(strategy, timeout_seconds=DEFAULT_COLLECTIVE_TIMEOUT_SECONDS):
    """Turns TensorFlow's report of a lost worker into a one-line `WorkerLostError`.

    Only on a multi-worker `MultiWorkerMirroredStrategy`; other errors pass unchanged.
    """
    try:
        yield
    except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
            tf.errors.AbortedError, tf.errors.InternalError) as error:
        resolver = getattr(strategy, "cluster_resolver", None)
        cluster = (resolver.cluster_spec().as_dict() if resolver is not None and
                   isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) else {})
        this_task = (resolver.task_type, resolver.task_id) if cluster else None
        line = (lost_worker_message(error.message, cluster, timeout_seconds, this_task)
                if cluster else None)
        if line is None:
            raise
        raise WorkerLostError(line) from None


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
