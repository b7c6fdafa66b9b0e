"""A run's output folder: claimed only when it is new, empty, or the same run to resume.

A rerun of the same command resumes from the newest checkpoint, so a folder that already holds
a run is fine as long as the run's settings are the same. Anything else (a converted model
directory, another run's checkpoints, unrelated files) is refused *before* anything is written,
so a mistyped `--output_dir` never overwrites work.
"""

import os

import tensorflow as tf
from absl import logging

from bert_tf.errors import UserError

SETTINGS_FILE = "pretraining_flags.txt"


class OutputDirError(UserError):
    """`--output_dir` holds something that this run must not overwrite."""


def settings_lines(settings):
    """`{name: value}` as flagfile lines (`--name=value`), None values left out."""
    return [f"--{name}={value}" for name, value in settings.items() if value is not None]


def _read_settings(path):
    with tf.io.gfile.GFile(path) as f:
        lines = [line for line in f.read().split("\n") if line.startswith("--")]
    return dict(line[2:].split("=", 1) for line in lines if "=" in line)


def claim_output_dir(output_dir, settings, may_change=frozenset()):
    """Checks that `output_dir` may take this run, then writes its settings file there.

    Args:
      output_dir: the run's folder (created if missing).
      settings: `{option: value}` of the run, written as a rerunnable flagfile.
      may_change: options that may differ from the stored run's on a resume.

    Raises:
      OutputDirError: the folder holds files of something else, or a run with other settings.
    """
    path = os.path.join(output_dir, SETTINGS_FILE)
    entries = sorted(tf.io.gfile.listdir(output_dir)) if tf.io.gfile.isdir(output_dir) else []
    if entries and not tf.io.gfile.exists(path):
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise OutputDirError(
            f"--output_dir={output_dir} is not empty and holds no pretraining run to resume "
            f"(found {shown}); choose a new or empty folder so nothing there is overwritten.")
    if entries:
        stored = _read_settings(path)
        current = dict(line[2:].split("=", 1) for line in settings_lines(settings))
        changed = sorted(name for name in set(stored) | set(current)
                         if name not in may_change and stored.get(name) != current.get(name))
        if changed:
            differences = "; ".join(f"--{name}: {stored.get(name)} there, {current.get(name)} "
                                    "here" for name in changed[:3])
            raise OutputDirError(
                f"--output_dir={output_dir} holds a run with other settings ({differences}); "
                "rerun with its flags to resume (see its pretraining_flags.txt), or choose a "
                "new folder.")
    tf.io.gfile.makedirs(output_dir)
    remove_unfinished_saves(output_dir)
    with tf.io.gfile.GFile(path, "w") as f:
        f.write("\n".join(settings_lines(settings)) + "\n")
    return path


def remove_unfinished_saves(output_dir):
    """Deletes the `*_temp*` folders a checkpoint save leaves when it is killed mid-write."""
    for name in tf.io.gfile.listdir(output_dir):
        full = os.path.join(output_dir, name.rstrip("/"))
        if "_temp" in name and tf.io.gfile.isdir(full):
            logging.warning("Removing %s, left by a checkpoint save that did not finish.", full)
            tf.io.gfile.rmtree(full)
