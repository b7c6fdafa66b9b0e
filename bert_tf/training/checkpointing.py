"""Training checkpoints: save every N steps, resume from the latest, warm-start from a model.

A training checkpoint holds the model parts at the top level (`encoder`, heads), so a
training `output_dir` is also a model directory for `restore_model_dir`; beside them sit
`optimizer` (slots, iterations, loss scale) and `step`. The input position is the step: the
datasets are deterministic and are skipped forward on resume (a distributed iterator
cannot be checkpointed).
"""

import contextlib
import errno
import logging as std_logging
import math
import os
import shutil
import uuid

import tensorflow as tf
from absl import logging
from google.protobuf import text_format

from bert_tf.checkpoints.model_dir import model_checkpoint_path
from bert_tf.errors import UserError
from bert_tf.training.distribution import is_chief, task_id


class InitCheckpointError(UserError, ValueError):
    """`init_checkpoint` is not a checkpoint of this model (another size, no encoder)."""


class _UnrestoredValueWarnings(std_logging.Filter):
    """Drops TensorFlow's per-variable warnings about a checkpoint read that failed.

    When a restore stops at a shape mismatch, TensorFlow's restore coordinator (out of reach:
    the failed `read` returns no status to call `expect_partial()` on) logs one warning per
    checkpoint value when it is deleted, about a hundred for BERT-base, burying the one line
    that says what is wrong.
    """

    PREFIXES = ("Detecting that an object or model or tf.train.Checkpoint is being deleted",
                "Value in checkpoint could not be found", "An attribute in the restored object")

    def filter(self, record):
        return not str(record.msg).startswith(self.PREFIXES)


class DiskFullError(UserError, OSError):
    """A checkpoint or model directory could not be written for lack of space."""


def _is_disk_full(error):
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return True
    # TensorFlow's file systems pass strerror(ENOSPC) on in an OpError's message.
    return isinstance(error, tf.errors.OpError) and "No space left" in error.message


@contextlib.contextmanager
def disk_full_is_a_user_error(path, needed_bytes, clean_up=()):
    """Turns a write that fails for lack of space into one `DiskFullError` line.

    Args:
      path: what was being written (named in the message).
      needed_bytes: `fn() -> int`, about how much space the write needs.
      clean_up: globs of the half-written files to delete, so that they are never taken
        for the newest checkpoint.
    """
    try:
        yield
    except (OSError, tf.errors.OpError) as error:
        if not _is_disk_full(error):
            raise
        for pattern in clean_up:
            for leftover in tf.io.gfile.glob(pattern):
                if tf.io.gfile.isdir(leftover):
                    tf.io.gfile.rmtree(leftover)
                else:
                    tf.io.gfile.remove(leftover)
        raise DiskFullError(
            f"No space left on the device writing {path} (it needs about "
            f"{needed_bytes() / 2**20:.1f} MiB); the newest checkpoint is the last complete "
            "one. Free space (or move --output_dir) and rerun the same command to resume."
        ) from None


def variables_bytes(trackables):
    """Bytes of the variables of `trackables` (models, optimizers): about a checkpoint's size."""
    seen, total = set(), 0
    for trackable in trackables:
        for variable in getattr(trackable, "variables", []):
            if id(variable) not in seen:
                seen.add(id(variable))
                total += math.prod(variable.shape) * tf.as_dtype(variable.dtype).size
    return total


def check_output_dir(output_dir):
    """Creates `output_dir` and proves it is writable, before any compute is spent.

    Raises:
      PermissionError: the folder cannot be created or written.
    """
    probe = os.path.join(output_dir, f".write_test_{uuid.uuid4().hex}")
    try:
        tf.io.gfile.makedirs(output_dir)
        with tf.io.gfile.GFile(probe, "w") as f:
            f.write("ok")
        tf.io.gfile.remove(probe)
    except (tf.errors.OpError, OSError) as error:
        raise PermissionError(f"output_dir {output_dir!r} is not writable: "
                              f"{getattr(error, 'message', error)}") from None


def _set_aside_damaged_state_file(directory):
    """Renames an unreadable `checkpoint` state file to `checkpoint.damaged` (with a warning).

    The manager would refuse to start on it; the checkpoints themselves are found on disk.
    """
    try:
        tf.train.get_checkpoint_state(directory)
    except (ValueError, text_format.ParseError) as error:
        path = os.path.join(directory, "checkpoint")
        logging.warning("Checkpoint state file %s is damaged (%s); moved it to %s.damaged and "
                        "looking for checkpoints on disk.", path, error, path)
        tf.io.gfile.rename(path, path + ".damaged", overwrite=True)


class TrainingCheckpoint:
    """A `tf.train.CheckpointManager` over model parts, optimizer and step.

    On multi-worker runs every worker saves (the save is collective); only the chief's copy
    lands in `output_dir`, the others write to a scratch folder that is removed.

    Args:
      strategy: the run's strategy.
      output_dir: where `ckpt-<step>` files go.
      items: dict of model trackables (e.g. `{"encoder": ..., "masked_lm": ...}`).
      optimizer: the optimizer (built, so its slots exist before a restore).
      step: the int64 step variable.
      max_to_keep: how many checkpoints to keep.
    """

    def __init__(self, strategy, output_dir, items, optimizer, step, max_to_keep=5):
        self.checkpoint = tf.train.Checkpoint(optimizer=optimizer, step=step, **items)
        self.trackables = [optimizer, *items.values()]
        self.chief = is_chief(strategy)
        self.output_dir = output_dir
        directory = output_dir if self.chief else os.path.join(
            output_dir, f".worker_{task_id(strategy)}_tmp")
        self.directory = directory
        if self.chief:
            _set_aside_damaged_state_file(directory)
        self.manager = tf.train.CheckpointManager(
            self.checkpoint, directory, max_to_keep=max_to_keep, step_counter=step,
            checkpoint_name="ckpt")
        self.step = step

    @property
    def latest(self):
        return self.manager.latest_checkpoint if self.chief else tf.train.latest_checkpoint(
            self.output_dir)

    def _candidates(self):
        """Checkpoint prefixes of `output_dir`, newest first: the state file's and any on disk."""
        listed = set(self.manager.checkpoints) if self.chief else set()
        if self.latest:
            listed.add(self.latest)
        found = {path[:-len(".index")] for path in
                 tf.io.gfile.glob(os.path.join(self.output_dir, "ckpt-*.index"))}
        numbered = [path for path in listed | found if path.rsplit("-", 1)[-1].isdigit()]
        return sorted(numbered, key=lambda path: int(path.rsplit("-", 1)[-1]), reverse=True)

    def restore_latest(self):
        """Restores the newest intact checkpoint of `output_dir`; returns its path or None.

        A damaged newer checkpoint (truncated data, missing `.index`, a broken `checkpoint`
        state file) is skipped with a warning naming it; its files are left in place and are
        overwritten when the run reaches that step again.
        """
        for path in self._candidates():
            try:
                self.checkpoint.restore(path).assert_existing_objects_matched()
            # A truncated file surfaces as IndexError ("Read less bytes than requested").
            except (tf.errors.OpError, ValueError, AssertionError, IndexError) as error:
                reason = str(getattr(error, "message", error)).split("\n")[0][:200]
                logging.warning("Checkpoint %s is damaged (%s); trying the one before it.",
                                path, reason)
                continue
            logging.info("Resumed from %s at step %d.", path, int(self.step.numpy()))
            return path
        return None

    def save(self):
        """Writes `ckpt-<step>`; returns its path (None on workers other than the chief).

        Raises:
          DiskFullError: no space for it; its partial files are removed, so the newest
            checkpoint stays the last complete one.
        """
        prefix = os.path.join(self.directory, f"ckpt-{int(self.step.numpy())}")
        with disk_full_is_a_user_error(prefix, lambda: variables_bytes(self.trackables),
                                       clean_up=(prefix + ".*", prefix + "_temp*")):
            path = self.manager.save(checkpoint_number=self.step)
        if not self.chief:
            shutil.rmtree(self.directory, ignore_errors=True)
            return None
        logging.info("Saved checkpoint %s.", path)
        return path


def _checkpoint_prefix(path):
    if tf.io.gfile.isdir(path):
        return model_checkpoint_path(path)
    if not tf.io.gfile.exists(path + ".index"):
        raise FileNotFoundError(f"init_checkpoint {path!r}: neither a model directory nor a "
                                f"checkpoint prefix ({path}.index is missing).")
    return path


def restore_init_checkpoint(path, items, required=("encoder",)):
    """Warm-starts `items` from a model directory or checkpoint prefix (no optimizer state).

    Items the checkpoint lacks keep their initial values (a logged warning), except the
    `required` ones; every variable of a restored item must be found with its shape.

    Returns:
      The names of the restored items.

    Raises:
      FileNotFoundError: nothing at `path`.
      InitCheckpointError: a required item is missing or a shape differs.
    """
    prefix = _checkpoint_prefix(path)
    keys = {name.split("/")[0] for name, _ in tf.train.list_variables(prefix)}
    restored = []
    for name, item in items.items():
        if name not in keys:
            if name in required:
                raise InitCheckpointError(f"init_checkpoint {prefix} has no `{name}`; its "
                                          f"top-level keys are {sorted(keys)}.")
            logging.warning("init_checkpoint %s has no `%s`; it starts from scratch.", prefix, name)
            continue
        try:
            tf.train.Checkpoint(**{name: item}).read(prefix).assert_existing_objects_matched()
        except (AssertionError, ValueError) as error:
            tf.get_logger().addFilter(_UnrestoredValueWarnings())
            reason = " ".join(str(error).split("\n")[0].split())
            raise InitCheckpointError(f"init_checkpoint {prefix}: `{name}` does not match the "
                                      f"model (check bert_config_file): {reason}") from None
        restored.append(name)
    logging.info("Initialized %s from %s.", restored, prefix)
    return restored
