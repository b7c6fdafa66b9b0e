"""The lines that close a pretraining run: the real-token share of its training batches and
what --packed_training did with it."""

import os

import pytest
import tensorflow as tf

from bert_tf.reporting import pretraining_summary as summary
from bert_tf.training.options import PretrainingOptions


@pytest.fixture(autouse=True)
def _no_matmul_timing(monkeypatch):
    monkeypatch.setattr(summary, "speed_line", lambda seconds, dtype: "This run took 1 s.")


def _lines(tmp_path, train, **overrides):
    options = PretrainingOptions(bert_config_file="config.json", input_file="train.tfrecord",
                                 output_dir=str(tmp_path), **overrides)
    result = {"step": 10, "train": train, "eval": {}, "model_dir": str(tmp_path)}
    return summary.pretraining_summary(result, options, 1.0, fill_mask_examples=0)


def _real_tokens_lines(lines):
    return [line for line in lines if "real tokens" in line]


def test_the_share_and_what_packed_training_did_are_one_line(tmp_path):
    line, = _real_tokens_lines(_lines(tmp_path, {"loss": 5.0, "real_tokens": 0.6749},
                                      max_seq_length=512))
    assert line == ("This run's training batches were 67% real tokens (the rest padding); "
                    "--packed_training=auto computed real tokens only.")
    line, = _real_tokens_lines(_lines(tmp_path, {"real_tokens": 0.91}, max_seq_length=128))
    assert line == ("This run's training batches were 91% real tokens (the rest padding); "
                    "--packed_training=auto computed every slot.")
    line, = _real_tokens_lines(_lines(tmp_path, {"real_tokens": 0.58}, packed_training="false"))
    assert line.endswith("--packed_training=false computed every slot (--packed_training=true "
                         "would skip the padding).")


def test_the_share_is_the_whole_runs_from_its_tensorboard_scalars(tmp_path):
    with tf.summary.create_file_writer(os.path.join(tmp_path, "train")).as_default():
        # steps 1-10, as the train loop logs
        tf.summary.write("real_tokens", tf.constant(0.5), step=10)
        tf.summary.write("real_tokens", tf.constant(1.0), step=30)  # steps 11-30
    line, = _real_tokens_lines(_lines(tmp_path, {"real_tokens": 1.0}, max_seq_length=512))
    # (10·0.5 + 20·1) / 30
    assert line.startswith("This run's training batches were 83% real tokens")


def test_an_eval_only_run_says_nothing_of_training_batches(tmp_path):
    assert not _real_tokens_lines(_lines(tmp_path, {}, do_train=False))
