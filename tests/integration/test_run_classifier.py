"""The real `run_classifier` entry point on GLUE-format files and a tiny model: train, eval,
predict, kill mid-run and resume; and bad inputs, each refused with one line naming the flag,
file or line, before any file is written (in this process but one, which shows the console).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from bert_tf.checkpoints.model_dir import read_model_info
from tests.entry_points import (
    assert_user_error,
    call_entry_point,
    free_ports,
    run_entry_point,
    snapshot,
)

HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
WORDS = ["the", "cat", "dog", "sat", "ran", "on", "a", "mat", "park", "big"]


def _mrpc(folder, rows, seed):
    """MRPC-layout files; label 1 when both strings share their first word."""
    rng = random.Random(seed)
    folder.mkdir(exist_ok=True)
    for name, count in (("train.tsv", rows), ("dev.tsv", rows // 2)):
        lines = []
        for i in range(count):
            a = " ".join(rng.choice(WORDS) for _ in range(5))
            b = " ".join(rng.choice(WORDS) for _ in range(5))
            lines.append(f"{int(a.split()[0] == b.split()[0])}\t{i}\t{i}\t{a}\t{b}\n")
        (folder / name).write_text(HEADER + "".join(lines))
    (folder / "test.tsv").write_text("index\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                     "0\t1\t2\tthe cat\tthe dog\n1\t3\t4\ta mat\tbig park\n")


def _command(data_dir, model_dir, output_dir, *extra):
    return [sys.executable, "-m", "bert_tf.run_classifier", "--task_name=MRPC",
            f"--data_dir={data_dir}", f"--model_dir={model_dir}", f"--output_dir={output_dir}",
            "--max_seq_length=32", "--train_batch_size=8", "--eval_batch_size=16",
            "--learning_rate=1e-3", "--num_train_epochs=2", "--save_checkpoints_steps=2",
            "--steps_per_loop=1", *extra]


def _env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")


@pytest.mark.subprocess
@pytest.mark.slow
def test_train_kill_resume_eval_predict(tiny_model_dir, tmp_path):
    _mrpc(tmp_path / "MRPC", rows=96, seed=0)
    output_dir = tmp_path / "out"
    command = _command(tmp_path / "MRPC", tiny_model_dir, output_dir,
                       "--do_train", "--do_eval", "--do_predict")
    first = subprocess.Popen(command, env=_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while not (output_dir / "ckpt-4.index").exists():
        assert first.poll() is None, first.stderr.read()[-3000:]
        assert time.time() < deadline, "no checkpoint within 240 s"
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)  # killed mid-epoch 1 (12 steps an epoch)
    first.wait()
    assert not (output_dir / "model").exists()

    rerun = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=400)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "Resumed from" in rerun.stderr and "at step 0" not in rerun.stderr
    assert "Resumed from" in (output_dir / "log.txt").read_text()
    history = json.loads((output_dir / "eval_history.json").read_text())
    assert [entry["step"] for entry in history] == [12, 24]
    assert all(0.0 <= entry["metrics"]["f1"] <= 1.0 for entry in history)
    info = read_model_info(str(output_dir / "model"))
    assert info["head"] == "classifier" and info["label_names"] == ["0", "1"]
    assert info["step"] in (12, 24)
    submission = (output_dir / "MRPC.tsv").read_text().splitlines()
    assert submission[0] == "index\tprediction" and len(submission) == 3
    assert {line.split("\t")[1] for line in submission[1:]} <= {"0", "1"}
    assert "--task_name=MRPC" in (output_dir / "flags.txt").read_text()

    # More epochs continue the run. (Fewer epochs than the newest checkpoint's step, or another
    # --learning_rate, are refused by the same write_settings call:
    # tests/training/test_run_directory.py::test_fine_tuning_settings_live_in_their_own_flagfile.)
    longer = subprocess.run(command + ["--num_train_epochs=3"], env=_env(), capture_output=True,
                            text=True, timeout=400)
    assert longer.returncode == 0, longer.stderr[-3000:]
    assert "--num_train_epochs changed from 2.0 to 3.0" in longer.stderr
    history = json.loads((output_dir / "eval_history.json").read_text())
    assert [entry["step"] for entry in history] == [12, 24, 36]
    assert "--num_train_epochs=3.0" in (output_dir / "flags.txt").read_text()


@pytest.mark.subprocess
@pytest.mark.slow
def test_two_workers_a_lost_one_is_one_line_and_the_rerun_of_both_finishes(tiny_model_dir,
                                                                          tmp_path):
    """Two workers (multi_worker_mirrored). `kill -9` of the one that is not the chief: the
    chief exits 1 with one line naming it (as run_pretraining's does). Both rerun: they resume
    and finish (each epoch scored on the dev set), and only the chief wrote the model
    directory and the epochs' history."""
    _mrpc(tmp_path / "MRPC", rows=96, seed=0)
    output_dir = tmp_path / "out"
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    # 4 epochs of 12 steps: the kill at the first checkpoint (step 2) leaves 46 (~10 s) to go.
    command = _command(tmp_path / "MRPC", tiny_model_dir, output_dir, "--do_train", "--do_eval",
                       "--num_train_epochs=4", "--distribution_strategy=multi_worker_mirrored",
                       "--collective_timeout_seconds=60")

    def start(phase):
        logs = [tmp_path / f"{phase}_worker{index}.log" for index in range(2)]
        return [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                                 env=dict(_env(), TF_CONFIG=json.dumps(
                                     {"cluster": {"worker": workers},
                                      "task": {"type": "worker", "index": index}})))
                for index, log in enumerate(logs)], logs

    processes, logs = start("first")
    try:
        deadline = time.time() + 240
        while not (output_dir / "ckpt-2.index").exists():
            assert processes[0].poll() is None, logs[0].read_text()[-3000:]
            assert time.time() < deadline, "no checkpoint within 240 s"
            time.sleep(0.05)
        processes[1].send_signal(signal.SIGKILL)
        processes[1].wait(timeout=60)
        assert processes[0].wait(timeout=120) == 1, logs[0].read_text()[-3000:]
    finally:
        for process in processes:
            process.kill()
    log = logs[0].read_text()
    assert "Traceback" not in log, log[-3000:]
    assert log.strip().split("\n")[-1].startswith(
        f"run_classifier: error: lost a worker of the 2-worker run: worker 1 ({workers[1]}) "), \
        log[-3000:]

    processes, logs = start("rerun")
    try:
        codes = [process.wait(timeout=400) for process in processes]
    finally:
        for process in processes:
            process.kill()
    texts = [log.read_text() for log in logs]
    assert codes == [0, 0], texts[0][-2000:] + texts[1][-2000:]
    assert "Resumed from" in texts[0] and "at step 0" not in texts[0], texts[0][-2000:]
    history = json.loads((output_dir / "eval_history.json").read_text())
    assert [entry["step"] for entry in history][-1] == 48
    assert all(0.0 <= entry["metrics"]["f1"] <= 1.0 for entry in history)
    best = [entry["step"] for entry in history if entry.get("best")]
    assert read_model_info(str(output_dir / "model"))["step"] == best[-1]
    assert not [name for name in os.listdir(output_dir) if name.startswith(".worker")]


@pytest.mark.subprocess
def test_bad_label_exits_with_the_file_and_line(tiny_model_dir, tmp_path):
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    train = tmp_path / "MRPC" / "train.tsv"
    train.write_text(train.read_text() + "yes\t9\t9\tthe cat\tthe dog\n")
    result = run_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out", "--do_train")[3:])
    assert_user_error(result, f"{train}:10: label 'yes' is not in the label list")
    assert not (tmp_path / "out").exists()  # nothing is written before the data is read


@pytest.mark.parametrize("extra, fragments", [
    (["--train_batch_size=0"], ["--train_batch_size=0"]),
    (["--learning_rate=0"], ["--learning_rate=0.0: must be greater than 0"]),
    (["--max_seq_length=4096"], ["--max_seq_length=4096: must be at most the model's "
                                 "max_position_embeddings=64"]),
    (["--metrics=acc"], ["--metrics=acc: unknown ['acc']"]),
])
def test_bad_flags_are_named(tiny_model_dir, tmp_path, extra, fragments):
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out", "--do_train", *extra)[3:])
    if extra[0].startswith("--train_batch_size"):  # absl's own bound check, at parsing
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert "flag --train_batch_size=0: 0 is not a positive integer" in result.stderr
    else:
        assert_user_error(result, *fragments)
    assert snapshot(tmp_path, tiny_model_dir) == before


def test_a_malformed_tf_config_is_one_line_before_any_data_is_read(tiny_model_dir, tmp_path,
                                                                    monkeypatch):
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1"]}')  # unclosed
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out", "--do_train",
        "--distribution_strategy=multi_worker_mirrored")[3:])
    assert_user_error(result, "--distribution_strategy=multi_worker_mirrored: TF_CONFIG must "
                              "be JSON like")
    assert snapshot(tmp_path, tiny_model_dir) == before


def test_output_dir_in_the_model_dir_is_refused(tiny_model_dir, tmp_path):
    """Nothing lost: the starting model is never overwritten, nor an unrelated folder."""
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    before = snapshot(tmp_path, tiny_model_dir)
    for output_dir, message in ((tiny_model_dir, f"--output_dir={tiny_model_dir}: is (inside) "
                                 f"--model_dir={tiny_model_dir}"),
                                (tmp_path / "mine", "holds files of something other than a "
                                 "fine-tuning run (notes.txt)")):
        result = call_entry_point("bert_tf.run_classifier", *_command(
            tmp_path / "MRPC", tiny_model_dir, output_dir, "--do_train")[3:])
        assert_user_error(result, message)
    assert snapshot(tmp_path, tiny_model_dir) == before


def test_tab_inside_a_text_names_the_line(tiny_model_dir, tmp_path):
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    train = tmp_path / "MRPC" / "train.tsv"
    train.write_text(train.read_text() + "1\t9\t9\tthe cat\tthe\tdog\n")
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out", "--do_train")[3:])
    assert_user_error(result, f"{train}:10: 6 fields, but the header has 5 "
                      "(a tab inside a text?)")
    assert snapshot(tmp_path, tiny_model_dir) == before


def test_missing_inputs_are_named(tiny_model_dir, tmp_path):
    _mrpc(tmp_path / "MRPC", rows=8, seed=1)
    (tmp_path / "MRPC" / "dev.tsv").unlink()
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out", "--do_train", "--do_eval")[3:])
    assert_user_error(result,
                      f"--data_dir={tmp_path / 'MRPC'}: no such file {tmp_path / 'MRPC'}/dev.tsv")
    result = call_entry_point("bert_tf.run_classifier", *_command(
        tmp_path / "MRPC", tiny_model_dir, tmp_path / "out")[3:])
    assert_user_error(result, "give at least one of --do_train, --do_eval, "
                      "--do_predict")
    assert snapshot(tmp_path, tiny_model_dir) == before
    assert not (tmp_path / "out").exists()
