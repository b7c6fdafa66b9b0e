"""A run's output folder: claimed only when it is new, empty, or the same run to resume.

A rerun of the same command resumes from the newest checkpoint, so a folder that already holds
a run is fine as long as the run's settings are the same. Anything else (a converted model
directory, another run's checkpoints, unrelated files) is refused *before* anything is written,
so a mistyped `--output_dir` never overwrites work. Pretraining and fine-tuning share
`write_settings`: the settings that change what the saved state means must match; the length of
the run may grow (continuing a finished run); the folder's own path is not compared, so a
copied or moved run resumes where it is. A run that stopped before it saved anything (its
folder holds only its settings, lock, log and summaries: e.g. a wrong `--init_checkpoint`) does
not claim the folder: the next command takes it with its own settings, and says so in the log.

One live run per folder: `lock_output_dir` takes an `fcntl.flock` on `output_dir/.lock`. The
kernel drops the lock when its process dies (even by SIGKILL), so a killed run's lock never
needs deleting. Object stores (`gs://`) have no such lock: there the folder is not locked.
"""

import fcntl
import os
import socket

import tensorflow as tf
from absl import logging

from bert_tf.errors import UserError

SETTINGS_FILE = "pretraining_flags.txt"
LOCK_FILE = ".lock"
# What a run writes before its first checkpoint (`cli.LOG_FILE`, the TensorBoard folders):
# a folder holding only these and its settings has no work in it that other settings could spoil.
_BEFORE_FIRST_SAVE = frozenset({LOCK_FILE, "log.txt", "train", "eval"})
_held_locks = {}  # output_dir -> open lock file, held until the process exits


class OutputDirError(UserError):
    """`--output_dir` holds something that this run must not overwrite."""


def settings_lines(settings):
    """`{name: value}` as flagfile lines (`--name=value`), None values left out."""
    return [f"--{name}={value}" for name, value in settings.items() if value is not None]


def _read_settings(path):
    with tf.io.gfile.GFile(path) as f:
        lines = [line for line in f.read().split("\n") if line.startswith("--")]
    return dict(line[2:].split("=", 1) for line in lines if "=" in line)


def newest_checkpoint_step(output_dir):
    """The step of the newest `ckpt-<step>` in `output_dir` (state file or on disk), or 0."""
    steps = [int(path[:-len(".index")].rsplit("-", 1)[-1]) for path in
             tf.io.gfile.glob(os.path.join(output_dir, "ckpt-*.index"))
             if path[:-len(".index")].rsplit("-", 1)[-1].isdigit()]
    return max(steps, default=0)


def saved_nothing(output_dir, settings_file=SETTINGS_FILE):
    """True when `output_dir` holds no checkpoint nor result: only what a run writes first."""
    entries = {name.rstrip("/") for name in tf.io.gfile.listdir(output_dir)}
    return entries <= _BEFORE_FIRST_SAVE | {settings_file}


def lock_output_dir(output_dir):
    """Holds `output_dir/.lock` (pid and host inside) until this process exits.

    Raises:
      OutputDirError: another live process holds the folder.
    """
    if "://" in output_dir or output_dir in _held_locks:
        return  # no flock on object stores (see the module docstring)
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, LOCK_FILE)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open while the run lives
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise OutputDirError(f"--output_dir={output_dir} is in use by {holder} (see {path}); "
                             "wait for that run to end or stop it, or choose another folder."
                             ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    handle.flush()
    _held_locks[output_dir] = handle


def release_output_dir(output_dir):
    """Lets go of the lock `lock_output_dir` took (the process's exit does it too)."""
    handle = _held_locks.pop(output_dir, None)
    if handle is not None:
        handle.close()


def write_settings(output_dir, settings, may_change=frozenset(), length=None,
                   settings_file=SETTINGS_FILE):
    """Compares `settings` with those stored in `output_dir`, locks it, writes them there.

    Args:
      output_dir: the run's folder (created if missing).
      settings: `{option: value}` of the run, written as a rerunnable flagfile.
      may_change: options that may differ from the stored run's on a resume.
      length: `(option, final_step)`: the option that sets the run's length (e.g.
        `num_train_steps`) and the step it ends at. It may differ from the stored run's (the
        run continues from its newest checkpoint), but not end before that checkpoint.
      settings_file: the flagfile's name in `output_dir`.

    Returns:
      The stored settings (`{}` for a new run).

    Raises:
      OutputDirError: a run with other settings (that saved a checkpoint or result), one
        already past `final_step`, or another live run holds the folder.
    """
    path = os.path.join(output_dir, settings_file)
    stored = _read_settings(path) if tf.io.gfile.exists(path) else {}
    if stored and saved_nothing(output_dir, settings_file):
        lock_output_dir(output_dir)  # a live run that has not saved yet keeps its folder
        logging.warning("%s holds the settings of a run that saved nothing (no checkpoint); "
                        "this run takes the folder with its own settings.", output_dir)
        stored = {}
    current = dict(line[2:].split("=", 1) for line in settings_lines(settings))
    free = set(may_change) | {"output_dir"} | ({length[0]} if length else set())
    if stored:
        changed = sorted(name for name in set(stored) | set(current)
                         if name not in free and stored.get(name) != current.get(name))
        if changed:
            differences = "; ".join(f"--{name}: {stored.get(name)} there, {current.get(name)} "
                                    "here" for name in changed[:3])
            raise OutputDirError(
                f"--output_dir={output_dir} holds a run with other settings ({differences}); "
                f"rerun with its flags to resume (see its {settings_file}), or choose a "
                "new folder.")
    if length:
        name, final_step = length
        newest = newest_checkpoint_step(output_dir)
        if newest > final_step:
            raise OutputDirError(
                f"--{name}={current.get(name)} ends at step {final_step}, but --output_dir="
                f"{output_dir} holds a checkpoint at step {newest}; give at least that many "
                "steps to continue it, or choose a new folder.")
        if stored and stored.get(name) != current.get(name):
            logging.info("Continuing the run in %s from step %d: --%s changed from %s to %s. "
                         "The learning-rate schedule is recomputed for the new length (warm-up "
                         "and linear decay to 0 at step %d), so the rate from step %d on is the "
                         "new schedule's, not the old one's.", output_dir, newest, name,
                         stored.get(name), current.get(name), final_step, newest)
    tf.io.gfile.makedirs(output_dir)
    lock_output_dir(output_dir)
    with tf.io.gfile.GFile(path, "w") as f:
        f.write("\n".join(settings_lines(settings)) + "\n")
    return stored


def claim_output_dir(output_dir, settings, may_change=frozenset(), length=None):
    """Locks `output_dir`, checks that it may take this pretraining run, writes its settings.

    Args:
      output_dir, settings, may_change, length: as `write_settings`.

    Raises:
      OutputDirError: another live run holds the folder, or it holds files of something
        else, or a run with other settings.
    """
    path = os.path.join(output_dir, SETTINGS_FILE)
    entries = sorted(name for name in (tf.io.gfile.listdir(output_dir)
                                       if tf.io.gfile.isdir(output_dir) else [])
                     if name != LOCK_FILE)
    if entries and not tf.io.gfile.exists(path):
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise OutputDirError(
            f"--output_dir={output_dir} is not empty and holds no pretraining run to resume "
            f"(found {shown}); choose a new or empty folder so nothing there is overwritten.")
    write_settings(output_dir, settings, may_change, length)
    remove_unfinished_saves(output_dir)
    return path


def remove_unfinished_saves(output_dir):
    """Deletes the `*_temp*` folders a checkpoint save leaves when it is killed mid-write."""
    for name in tf.io.gfile.listdir(output_dir):
        full = os.path.join(output_dir, name.rstrip("/"))
        if "_temp" in name and tf.io.gfile.isdir(full):
            logging.warning("Removing %s, left by a checkpoint save that did not finish.", full)
            tf.io.gfile.rmtree(full)
