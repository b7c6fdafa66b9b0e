"""Resume survives damage: a broken newest checkpoint falls back to the newest intact one."""

import os
import shutil

import keras
import numpy as np
import pytest
from absl import logging

from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining_loss import pretraining_loss_fn
from bert_tf.training.run_directory import remove_unfinished_saves
from bert_tf.training.train_loop import Trainer, run_training
from tests.training.conftest import dataset_fn

BATCH = 8


def _run(config, output_dir, steps):
    keras.utils.set_random_seed(0)  # both runs start from the same weights
    strategy = get_strategy("one_device")
    with strategy.scope():
        model = build_pretrainer(config)
        optimizer = create_optimizer("adamw", 1e-3, num_train_steps=4, num_warmup_steps=1)
    trainer = Trainer(strategy, model, pretraining_loss_fn(BATCH), optimizer)
    losses = {}
    run_training(trainer, dataset_fn(BATCH), BATCH, steps, str(output_dir),
                 model.checkpoint_items(), steps_per_loop=1, save_checkpoints_steps=2,
                 progress_fn=lambda p: losses.__setitem__(p.step, p.loss))
    return losses


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def _remove(path):
    os.remove(path)


def _empty_state_file(output_dir):
    open(os.path.join(output_dir, "checkpoint"), "w").close()


@pytest.fixture(scope="module")
def straight_run(dropout_free_config, tmp_path_factory):
    """An uninterrupted 4-step run: its folder, which each test copies and damages (the same
    seeded run would write the same checkpoints again), and its losses, the reference for
    every resumed run."""
    folder = tmp_path_factory.mktemp("straight") / "run"
    return dropout_free_config, folder, _run(dropout_free_config, folder, 4)


@pytest.mark.parametrize("damage", ["truncated_data", "missing_index", "empty_state_file"])
def test_resume_skips_a_damaged_newest_checkpoint(straight_run, tmp_path, damage, caplog):
    dropout_free_config, straight_dir, straight = straight_run
    output_dir = tmp_path / "damaged"
    shutil.copytree(straight_dir, output_dir)
    newest = str(output_dir / "ckpt-4")
    if damage == "truncated_data":
        _truncate(newest + ".data-00000-of-00001")
    elif damage == "missing_index":
        _remove(newest + ".index")
    else:
        _empty_state_file(str(output_dir))
        _truncate(newest + ".data-00000-of-00001")
    with caplog.at_level(logging.WARNING, logger="absl"):
        resumed = _run(dropout_free_config, output_dir, 4)
    # Steps 3 and 4 ran again from ckpt-2, on the same batches as the straight run.
    assert sorted(resumed) == [3, 4]
    np.testing.assert_allclose([resumed[3], resumed[4]], [straight[3], straight[4]], rtol=1e-4)
    if damage != "missing_index":  # without an index file there is no ckpt-4 left to name
        assert any("ckpt-4" in r.getMessage() and "damaged" in r.getMessage()
                   for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_unfinished_save_folders_are_removed(tmp_path):
    (tmp_path / "ckpt-6_temp").mkdir()
    (tmp_path / "ckpt-6_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x")
    (tmp_path / "ckpt-4.index").write_bytes(b"kept")
    remove_unfinished_saves(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["ckpt-4.index"]
