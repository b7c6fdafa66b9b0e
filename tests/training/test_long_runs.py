"""What a long run meets: SIGTERM (preemption) and a full disk, in process (whole program:
tests/integration/test_run_pretraining.py)."""

import errno
import os
import signal

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.checkpointing import (
    DiskFullError,
    TrainingCheckpoint,
    disk_full_is_a_user_error,
)
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining_loss import pretraining_loss_fn
from bert_tf.training.train_loop import Trainer, TrainingStopped, run_training
from tests.training.conftest import dataset_fn

GLOBAL_BATCH, STEPS, PER_LOOP = 8, 8, 2


@pytest.fixture(scope="module")
def initial_weights(dropout_free_config):
    return build_pretrainer(dropout_free_config).get_weights()


def _run(config, weights, output_dir, on_progress=lambda progress: None, **kwargs):
    """A fresh model and optimizer (as a rerun builds them); `{step: loss}` of each loop call."""
    strategy = get_strategy("one_device")
    with strategy.scope():
        model = build_pretrainer(config)
        model.set_weights(weights)
        optimizer = create_optimizer("adamw", 1e-2, num_train_steps=STEPS, num_warmup_steps=2)
    trainer = Trainer(strategy, model, pretraining_loss_fn(GLOBAL_BATCH), optimizer)
    losses = {}

    def progress(report):
        losses[report.step] = (report.loss, report.learning_rate)
        on_progress(report)

    result = run_training(trainer, dataset_fn(GLOBAL_BATCH), GLOBAL_BATCH, STEPS,
                          str(output_dir), model.checkpoint_items(), steps_per_loop=PER_LOOP,
                          progress_fn=progress, **kwargs)
    return result, losses


def test_sigterm_saves_the_current_step_and_the_rerun_matches_an_uninterrupted_run(
        dropout_free_config, initial_weights, tmp_path, monkeypatch):
    _, straight = _run(dropout_free_config, initial_weights, tmp_path / "straight",
                       save_checkpoints_steps=100)
    original_save = TrainingCheckpoint.save

    def save_signalled_again(self):  # a second SIGTERM while the checkpoint is written
        os.kill(os.getpid(), signal.SIGTERM)
        return original_save(self)

    monkeypatch.setattr(TrainingCheckpoint, "save", save_signalled_again)

    def preempt(report):
        if report.step == 4:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(TrainingStopped, match=r"Stopped by SIGTERM at step 4; saved checkpoint "
                                              r".*ckpt-4\. Rerun") as stopped:
        _run(dropout_free_config, initial_weights, tmp_path / "preempted", preempt,
             save_checkpoints_steps=100)
    assert stopped.value.exit_code == 128 + signal.SIGTERM
    # The handler is gone after the run: this process's SIGTERM is Python's default again.
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    monkeypatch.undo()
    assert tf.train.latest_checkpoint(str(tmp_path / "preempted")).endswith("ckpt-4")

    result, resumed = _run(dropout_free_config, initial_weights, tmp_path / "preempted",
                           save_checkpoints_steps=100)
    assert result.step == STEPS and sorted(resumed) == [6, 8]  # no step redone
    for step, (loss, rate) in resumed.items():  # same batches, same schedule
        np.testing.assert_allclose((loss, rate), straight[step], rtol=1e-5)


def test_a_full_disk_stops_naming_the_path_and_keeps_the_last_checkpoint(
        dropout_free_config, initial_weights, tmp_path, monkeypatch):
    output_dir = tmp_path / "run"
    original_save = tf.train.CheckpointManager.save

    def save_then_fill_the_disk(self, checkpoint_number=None, **kwargs):
        if int(checkpoint_number) < 4:
            return original_save(self, checkpoint_number=checkpoint_number, **kwargs)
        # What a save cut short leaves: its temp folder and a partial index.
        os.makedirs(output_dir / "ckpt-4_temp")
        (output_dir / "ckpt-4.index").write_bytes(b"\0partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tf.train.CheckpointManager, "save", save_then_fill_the_disk)
    with pytest.raises(DiskFullError, match=r"No space left on the device writing "
                                            r".*ckpt-4 \(it needs about [\d.]+ MiB\)"):
        _run(dropout_free_config, initial_weights, output_dir, save_checkpoints_steps=2)
    assert not [name for name in os.listdir(output_dir) if name.startswith("ckpt-4")]
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-2")
    monkeypatch.undo()
    result, resumed = _run(dropout_free_config, initial_weights, output_dir,
                           save_checkpoints_steps=2)
    assert min(resumed) == 4 and result.checkpoint.endswith(f"ckpt-{STEPS}")


def test_a_tensorflow_write_error_for_space_is_a_full_disk_and_other_errors_pass(tmp_path):
    partial = tmp_path / "model.ckpt.data-00000-of-00001"
    with pytest.raises(DiskFullError, match=r"writing /x/model \(it needs about 2.0 MiB\)"):
        with disk_full_is_a_user_error("/x/model", lambda: 2 * 2**20,
                                       clean_up=(str(tmp_path / "model.ckpt*"),)):
            partial.write_bytes(b"half")
            raise tf.errors.UnknownError(None, None, f"{partial}; No space left on device")
    assert not partial.exists()
    with pytest.raises(tf.errors.PermissionDeniedError):
        with disk_full_is_a_user_error("/x/model", lambda: 0):
            raise tf.errors.PermissionDeniedError(None, None, "read-only file system")
