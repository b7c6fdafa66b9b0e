"""`python -m bert_tf.run_pretraining` end to end: resume after SIGKILL or SIGTERM, a run
continued past its end, one run per folder, multi-worker, bad input."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import UserError
from bert_tf.training.options import PretrainingOptions
from bert_tf.training.pretraining_runner import PretrainingInputError, run_pretraining
from bert_tf.training.run_directory import newest_checkpoint_step
from tests.entry_points import call_entry_point, free_ports

SEQ, PREDICTIONS, VOCAB = 16, 3, 60
STEP_LINE = re.compile(r"step (\d+)/\d+ loss=([\d.]+) .* lr=([\de.+-]+) ")


def _feature(values, kind=tf.train.Int64List):
    field = "float_list" if kind is tf.train.FloatList else "int64_list"
    return tf.train.Feature(**{field: kind(value=values)})


def write_records(path, count=64, seq=SEQ, predictions=PREDICTIONS, drop=None, seed=0):
    """google-research create_pretraining_data records (their feature names and dtypes)."""
    rng = np.random.default_rng(seed)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(count):
            length = int(rng.integers(seq // 2, seq + 1))
            ids = [2] + rng.integers(5, VOCAB, length - 2).tolist() + [3] + [0] * (seq - length)
            features = {
                "input_ids": _feature(ids),
                "input_mask": _feature([1] * length + [0] * (seq - length)),
                "segment_ids": _feature([0] * (length // 2) + [1] * (seq - length // 2)),
                "masked_lm_positions": _feature(rng.integers(1, length - 1, predictions).tolist()),
                "masked_lm_ids": _feature(rng.integers(5, VOCAB, predictions).tolist()),
                "masked_lm_weights": _feature([1.0] * predictions, tf.train.FloatList),
                "next_sentence_labels": _feature([int(rng.integers(0, 2))]),
            }
            features.pop(drop, None)
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return str(path)


def write_config(path, **overrides):
    config = {"vocab_size": VOCAB, "hidden_size": 16, "num_hidden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 32,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, **overrides}
    with open(path, "w") as f:
        json.dump(config, f)
    return str(path)


def _inputs(folder):
    return {"bert_config_file": write_config(folder / "bert_config.json"),
            "input_file": write_records(folder / "train.tfrecord"),
            "max_seq_length": SEQ, "max_predictions_per_seq": PREDICTIONS}


@pytest.fixture
def inputs(tmp_path):
    return _inputs(tmp_path)


def _command(output_dir, inputs, **flags):
    options = {**inputs, "output_dir": str(output_dir), "train_batch_size": 8,
               "learning_rate": 3e-3, "num_warmup_steps": 30, "do_eval": False, **flags}
    return [sys.executable, "-m", "bert_tf.run_pretraining"] + [f"--{k}={v}"
                                                                for k, v in options.items()]


def _env(**extra):
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "", **extra}


def _steps(log):
    return {int(s): (float(loss), float(lr)) for s, loss, lr in STEP_LINE.findall(log)}


def _weights(prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH" and "save_counter" not in name}


# The interrupted runs of the SIGKILL and SIGTERM tests, and the one uninterrupted run both
# compare against.
RESUMED_FLAGS = dict(num_train_steps=150, save_checkpoints_steps=50, steps_per_loop=2)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """`straight()` -> (output_dir, console log) of the uninterrupted run: started once, in the
    background beside the first test's own runs, on the same records."""
    folder = tmp_path_factory.mktemp("straight")
    process = subprocess.Popen(_command(folder / "run", _inputs(folder), **RESUMED_FLAGS),
                               env=_env(), stderr=subprocess.PIPE, text=True)
    log = []

    def finished():
        if not log:
            log.append(process.communicate(timeout=300)[1])
        assert process.returncode == 0, log[0][-2000:]
        return folder / "run", log[0]

    yield finished
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.mark.subprocess
@pytest.mark.slow
def test_sigkill_after_first_checkpoint_then_rerun_ends_like_an_uninterrupted_run(tmp_path, inputs,
                                                                                  straight):
    flags = RESUMED_FLAGS
    killed_dir = tmp_path / "killed"
    killed = subprocess.Popen(_command(killed_dir, inputs, **flags), env=_env(),
                              stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    # The manager's `checkpoint` state file is written last: then ckpt-50 is complete.
    while not (killed_dir / "checkpoint").exists() and killed.poll() is None:
        assert time.time() < deadline
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL
    assert not (killed_dir / "ckpt-150.index").exists()
    resumed = subprocess.run(_command(killed_dir, inputs, **flags), env=_env(),
                             stderr=subprocess.PIPE, text=True, timeout=300)
    straight_dir, straight_log = straight()
    assert resumed.returncode == 0, resumed.stderr[-2000:]

    assert "Resumed from" in resumed.stderr
    before, after = _steps(straight_log), _steps(resumed.stderr)
    first = min(after)
    assert first > 50 and first % 2 == 0  # continued from a saved step, not from 0
    for step in after:  # same batches (losses) and the same learning rate at every step
        np.testing.assert_allclose(after[step], before[step], rtol=1e-4)
    final = _weights(str(killed_dir / "ckpt-150"))
    reference = _weights(str(straight_dir / "ckpt-150"))
    assert final.keys() == reference.keys()
    for name in reference:  # CPU kernels are deterministic here; the tolerance covers oneDNN.
        np.testing.assert_allclose(final[name], reference[name], atol=1e-5, err_msg=name)
    # The end of the run is a model directory.
    assert {"bert_config.json", "model.ckpt.index", OPTIONS_FILE} <= set(os.listdir(killed_dir))


def _wait_for(path, text, process, timeout=300):
    deadline = time.time() + timeout
    while not (path.exists() and text in path.read_text()):
        assert process.poll() is None and time.time() < deadline, f"no {text!r} in {path}"
        time.sleep(0.05)


@pytest.mark.subprocess
@pytest.mark.slow
def test_sigterm_saves_and_the_rerun_ends_like_an_uninterrupted_run_then_continues(tmp_path,
                                                                                  inputs,
                                                                                  straight):
    flags = RESUMED_FLAGS
    run_dir = tmp_path / "preempted"
    command = _command(run_dir, inputs, **flags)
    first = subprocess.Popen(command, env=_env(), stderr=subprocess.PIPE, text=True)
    _wait_for(run_dir / "log.txt", "step 6/150", first)
    first.send_signal(signal.SIGSTOP)  # held mid-run while a second run tries the folder
    # The refused run runs in this process (a refusal's console in a new interpreter:
    # test_run_pretraining_errors.py::test_console_is_clean_whatever_tf_cpp_min_log_level_says).
    second = call_entry_point("bert_tf.run_pretraining", *command[3:])
    assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr[-2000:]
    assert f"is in use by pid {first.pid} on" in second.stderr.strip().split("\n")[-1]
    first.send_signal(signal.SIGTERM)  # handled as soon as it runs again
    first.send_signal(signal.SIGCONT)
    first_log = first.communicate(timeout=300)[1]
    assert first.returncode == 128 + signal.SIGTERM, first_log[-2000:]
    stopped = re.search(r"run_pretraining: Stopped by SIGTERM at step (\d+); saved checkpoint "
                        r"(\S+)\. Rerun the same command", first_log)
    assert stopped and "Traceback" not in first_log, first_log[-2000:]
    step = int(stopped.group(1))
    assert stopped.group(2) == str(run_dir / f"ckpt-{step}") and step < 150

    resumed = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    before, after = _steps(straight()[1]), _steps(resumed.stderr)
    assert min(after) == step + 2  # resumed at the signal's step: nothing redone
    for at in after:  # same batches (losses) and the same learning rate at every step
        np.testing.assert_allclose(after[at], before[at], rtol=1e-4)

    # Raising --num_train_steps continues the finished run. (Lowering it below the newest
    # checkpoint is refused by claim_output_dir: tests/training/test_run_directory.py.)
    longer = subprocess.run(_command(run_dir, inputs, **{**flags, "num_train_steps": 154}),
                            env=_env(), capture_output=True, text=True, timeout=300)
    assert longer.returncode == 0, longer.stderr[-2000:]
    assert "--num_train_steps changed from 150 to 154" in longer.stderr
    assert sorted(_steps(longer.stderr)) == [152, 154]
    assert "--num_train_steps=154" in (run_dir / OPTIONS_FILE).read_text()


OPTIONS_FILE = "pretraining_flags.txt"


def _options(tmp_path, inputs, **overrides):
    return PretrainingOptions(**{**inputs, "output_dir": str(tmp_path / "out"),
                                 "train_batch_size": 8, "num_train_steps": 2,
                                 "num_warmup_steps": 1, "do_eval": False, **overrides})


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"input_file": "/nonexistent/shard-*"}, "matches no file"),
        ({"max_seq_length": 64}, "max_position_embeddings=32 is below --max_seq_length=64"),
        (
            {"train_batch_size": 7, "distribution_strategy": "mirrored"},
            "batch size 7 is not divisible by 2",
        ),
        (
            {"max_predictions_per_seq": 5},
            "masked_lm_positions.*3 values.*max_predictions_per_seq=5",
        ),
        ({"num_warmup_steps": 10}, "num_warmup_steps=10: must not exceed --num_train_steps=2"),
    ],
)
def test_bad_input_is_a_clear_error_before_training(tmp_path, inputs, overrides, match):
    with pytest.raises(UserError, match=match):
        run_pretraining(_options(tmp_path, inputs, **overrides))
    assert not tf.io.gfile.glob(str(tmp_path / "out" / "ckpt-*"))


def test_records_missing_a_feature_are_named(tmp_path, inputs):
    bad = write_records(tmp_path / "bad.tfrecord", count=4, drop="masked_lm_weights")
    with pytest.raises(PretrainingInputError, match="bad.tfrecord.*masked_lm_weights"):
        run_pretraining(_options(tmp_path, inputs, input_file=bad))


def test_empty_record_file_is_named(tmp_path, inputs):
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    with pytest.raises(PretrainingInputError, match="empty.tfrecord.*no records"):
        run_pretraining(_options(tmp_path, inputs, input_file=str(empty)))


def test_unwritable_output_dir_is_refused(tmp_path, inputs):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.raises(PermissionError, match="a_file.*not writable"):
        run_pretraining(_options(tmp_path, inputs, output_dir=str(blocker / "run")))


@pytest.mark.subprocess
@pytest.mark.slow
def test_sigterm_to_one_worker_of_two_stops_both_at_one_step_and_the_rerun_resumes(tmp_path,
                                                                                   inputs):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    output_dir = tmp_path / "mwms"

    def start():
        processes = []
        for index in range(2):
            tf_config = json.dumps({"cluster": {"worker": workers},
                                    "task": {"type": "worker", "index": index}})
            processes.append(subprocess.Popen(
                _command(output_dir, inputs, distribution_strategy="multi_worker_mirrored",
                         num_train_steps=40, save_checkpoints_steps=1000, steps_per_loop=2),
                env=_env(TF_CONFIG=tf_config), stderr=subprocess.PIPE, text=True))
        return processes

    processes = start()
    _wait_for(output_dir / "log.txt", "step 6/40", processes[0])
    processes[1].send_signal(signal.SIGTERM)  # the worker that is not the chief
    logs = [p.communicate(timeout=300)[1] for p in processes]
    assert [p.returncode for p in processes] == [143, 143], logs[0][-2000:] + logs[1][-2000:]
    steps = {int(re.search(r"at step (\d+); saved checkpoint", log).group(1)) for log in logs}
    assert len(steps) == 1, logs
    step = steps.pop()
    assert tf.train.latest_checkpoint(str(output_dir)) == str(output_dir / f"ckpt-{step}")

    processes = start()
    logs = [p.communicate(timeout=300)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    losses = [_steps(log) for log in logs]
    assert min(losses[0]) == step + 2 and max(losses[0]) == 40 and losses[0] == losses[1]
    # Two processes, one checkpoint per save: the chief's (the other worker's temporary
    # copies are gone).
    assert tf.train.get_checkpoint_state(str(output_dir)).all_model_checkpoint_paths == [
        str(output_dir / f"ckpt-{step}"), str(output_dir / "ckpt-40")]
    assert not [name for name in os.listdir(output_dir) if name.startswith(".worker")]


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_worker_killed_ends_the_other_within_bounds_naming_it_and_the_rerun_resumes(tmp_path,
                                                                                      inputs):
    """`kill -9` of one worker of two: the other exits within seconds, its last line naming the
    lost worker, and rerunning both resumes from the newest checkpoint. First the worker that
    is not the chief is lost (the chief's coordination service misses its heartbeats), then,
    in the rerun, the chief (the other worker's connection to it breaks)."""
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    output_dir = tmp_path / "mwms"
    # A kill comes within a few steps of a checkpoint at step ~4 or ~12 (the test polls every
    # 50 ms; ~20 steps/s here): 60 steps leave room, and the rerun to the end saves 12 times.
    flags = dict(distribution_strategy="multi_worker_mirrored", num_train_steps=60,
                 save_checkpoints_steps=4, steps_per_loop=2, collective_timeout_seconds=20)
    started = []

    def start(phase):
        logs = [tmp_path / f"{phase}_worker{index}.log" for index in range(2)]
        processes = [subprocess.Popen(
            _command(output_dir, inputs, **flags), stderr=open(log, "w"), text=True,
            env=_env(TF_CONFIG=json.dumps({"cluster": {"worker": workers},
                                           "task": {"type": "worker", "index": index}})))
            for index, log in enumerate(logs)]
        started.extend(processes)
        return processes, logs

    def lose(phase, victim, after_step):
        """Kills `victim` once the chief saved `ckpt-<after_step>`; returns the newest step."""
        processes, logs = start(phase)
        _wait_for(output_dir / "log.txt", f"Saved checkpoint {output_dir / f'ckpt-{after_step}'}.",
                  processes[0], timeout=240)
        processes[victim].send_signal(signal.SIGKILL)
        processes[victim].wait(timeout=60)
        killed = time.monotonic()
        survivor = processes[1 - victim]
        survivor.wait(timeout=120)
        seconds = time.monotonic() - killed
        log = logs[1 - victim].read_text()
        print(f"{phase}: worker {1 - victim} exited {seconds:.1f} s after worker {victim}'s "
              "kill -9")
        assert survivor.returncode == 1 and seconds < flags["collective_timeout_seconds"] + 15, \
            (seconds, log[-3000:])
        assert "Traceback" not in log, log[-3000:]
        assert log.strip().split("\n")[-1].startswith(
            f"run_pretraining: error: lost a worker of the 2-worker run: worker {victim} "
            f"({workers[victim]}) "), log[-3000:]
        newest = newest_checkpoint_step(str(output_dir))
        assert after_step <= newest < flags["num_train_steps"]
        return newest, logs

    try:
        first, _ = lose("first", victim=1, after_step=4)
        second, logs = lose("second", victim=0, after_step=first + 4)
        assert f"Resumed from {output_dir / f'ckpt-{first}'} at step {first}." in \
            logs[0].read_text()
        processes, logs = start("third")
        for process in processes:
            process.wait(timeout=300)
        texts = [log.read_text() for log in logs]
        assert [p.returncode for p in processes] == [0, 0], texts[0][-2000:] + texts[1][-2000:]
        assert f"Resumed from {output_dir / f'ckpt-{second}'} at step {second}." in texts[0]
        steps = [_steps(text) for text in texts]
        assert min(steps[0]) == second + 2 and max(steps[0]) == flags["num_train_steps"] \
            and steps[0] == steps[1]
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
