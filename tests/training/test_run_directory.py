"""A run's folder: settings compared on a resume, the run's length may grow, one live writer."""

import os
import shutil
import signal
import subprocess
import sys

import pytest
from absl import logging

from bert_tf.training.run_directory import (
    LOCK_FILE,
    SETTINGS_FILE,
    OutputDirError,
    claim_output_dir,
    release_output_dir,
    write_settings,
)

LENGTH = "num_train_steps"


def _settings(output_dir, **changes):
    return {"output_dir": str(output_dir), "learning_rate": 1e-4, LENGTH: 4, "steps_per_loop": 2,
            **changes}


def _claim(output_dir, **changes):
    settings = _settings(output_dir, **changes)
    try:
        return claim_output_dir(str(output_dir), settings, {"steps_per_loop"},
                                length=(LENGTH, settings[LENGTH]))
    finally:
        release_output_dir(str(output_dir))


def _checkpoint_at(output_dir, step):
    (output_dir / f"ckpt-{step}.index").write_bytes(b"")


def test_a_resume_may_change_only_what_does_not_change_the_trained_state(tmp_path):
    run = tmp_path / "run"
    _claim(run)
    _checkpoint_at(run, 2)
    _claim(run, steps_per_loop=10)
    with pytest.raises(OutputDirError, match=r"--learning_rate: 0.0001 there, 0.001 here"):
        _claim(run, learning_rate=1e-3)
    assert "--steps_per_loop=10" in (run / SETTINGS_FILE).read_text()


def test_a_run_that_saved_nothing_leaves_the_folder_free_for_other_settings(tmp_path,
                                                                          monkeypatch):
    run = tmp_path / "run"
    _claim(run)
    for name in ("log.txt", "train"):  # what a run writes before its first checkpoint
        (run / name).mkdir() if name == "train" else (run / name).write_text("")
    logged = []
    monkeypatch.setattr(logging, "warning", lambda message, *args: logged.append(message % args))
    _claim(run, learning_rate=1e-3)
    assert "--learning_rate=0.001" in (run / SETTINGS_FILE).read_text()
    assert any(str(run) in line and "saved nothing" in line for line in logged), logged


@pytest.mark.parametrize("saved", ["ckpt-2.index", "eval_results.json", "model.ckpt.index"])
def test_a_folder_with_a_checkpoint_or_result_keeps_refusing_other_settings(tmp_path, saved):
    run = tmp_path / "run"
    _claim(run)
    (run / saved).write_bytes(b"")
    before = (run / SETTINGS_FILE).read_text()
    with pytest.raises(OutputDirError, match=r"holds a run with other settings \(--learning_rate"):
        _claim(run, learning_rate=1e-3)
    assert (run / SETTINGS_FILE).read_text() == before


def test_a_moved_run_resumes_where_it_is(tmp_path):
    _claim(tmp_path / "run")
    _checkpoint_at(tmp_path / "run", 2)
    shutil.move(tmp_path / "run", tmp_path / "moved")
    _claim(tmp_path / "moved")
    assert f"--output_dir={tmp_path / 'moved'}" in (tmp_path / "moved" / SETTINGS_FILE).read_text()


def test_the_run_may_grow_but_not_end_before_its_newest_checkpoint(tmp_path, monkeypatch):
    run = tmp_path / "run"
    _claim(run)
    _checkpoint_at(run, 4)
    logged = []
    monkeypatch.setattr(logging, "info", lambda message, *args: logged.append(message % args))
    _claim(run, num_train_steps=6)
    assert f"--{LENGTH}=6" in (run / SETTINGS_FILE).read_text()
    assert any("from step 4" in line and "changed from 4 to 6" in line and "recomputed" in line
               for line in logged), logged
    with pytest.raises(OutputDirError, match=r"--num_train_steps=3 ends at step 3, but .* holds "
                                             r"a checkpoint at step 4"):
        _claim(run, num_train_steps=3)
    assert f"--{LENGTH}=6" in (run / SETTINGS_FILE).read_text()  # the refused run wrote nothing


def test_fine_tuning_settings_live_in_their_own_flagfile(tmp_path):
    run = tmp_path / "run"
    settings = {"learning_rate": 5e-5, "num_train_epochs": 2.0, "output_dir": str(run)}
    write_settings(str(run), settings, length=("num_train_epochs", 24), settings_file="flags.txt")
    release_output_dir(str(run))
    _checkpoint_at(run, 24)
    with pytest.raises(OutputDirError, match=r"--num_train_epochs=1.0 ends at step 12"):
        write_settings(str(run), {**settings, "num_train_epochs": 1.0},
                       length=("num_train_epochs", 12), settings_file="flags.txt")
    with pytest.raises(OutputDirError, match=r"--learning_rate: 5e-05 there, 0.0001 here.*"
                                             r"see its flags.txt"):
        write_settings(str(run), {**settings, "learning_rate": 1e-4},
                       length=("num_train_epochs", 24), settings_file="flags.txt")


_HOLD_LOCK = """
import fcntl, os, sys, time
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
handle.seek(0); handle.truncate()
handle.write(f"pid {os.getpid()} on testhost\\n"); handle.flush()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_live_run_holds_the_folder_and_a_killed_one_does_not(tmp_path):
    run = tmp_path / "run"
    _claim(run)
    other = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(run / LOCK_FILE)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "locked"
        with pytest.raises(OutputDirError, match=rf"is in use by pid {other.pid} on testhost"):
            _claim(run)
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    _claim(run)  # the kernel dropped the killed process's lock
    assert (run / LOCK_FILE).read_text().startswith(f"pid {os.getpid()} on ")
