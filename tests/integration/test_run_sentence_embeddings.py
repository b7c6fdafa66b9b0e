"""`python -m bert_tf.run_sentence_embeddings` on a tiny model: a run stopped by SIGTERM and
rerun ends with the uninterrupted run's weights, as a sentence-transformers folder; bad input
is one line, with nothing written."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.keras_tasks.sentence_embeddings_runner import SentenceEmbeddingOptions
from bert_tf.training.run_directory import settings_lines
from tests import fixtures
from tests.entry_points import REPO, assert_user_error, call_entry_point, snapshot
from tests.keras_tasks.conftest import TEXTS

ENTRY = "bert_tf.run_sentence_embeddings"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A dropout-free tiny model (steps repeat exactly) and 16 pairs plus one empty anchor."""
    folder = tmp_path_factory.mktemp("sentence_embeddings")
    fixtures.write_tiny_model_dir(str(folder / "model"), vocab_file=fixtures.minilm_vocab_file(),
                                  lower_case=True, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    with open(folder / "pairs.jsonl", "w") as f:
        for i, text in enumerate(TEXTS * 2):
            f.write(json.dumps({"q": text, "p": " ".join(reversed(text.split())) + f" {i}",
                                "n": TEXTS[i % 8 - 1]}) + "\n")
        f.write(json.dumps({"q": " ", "p": "no anchor", "n": "x"}) + "\n")
    return folder


def _args(inputs, output_dir, *extra):
    return (f"--init_checkpoint={inputs / 'model'}", f"--train_file={inputs / 'pairs.jsonl'}",
            "--anchor_column=q", "--positive_column=p", "--train_batch_size=4",
            "--num_train_epochs=2", "--learning_rate=1e-3", "--steps_per_loop=1",
            "--save_checkpoints_steps=2", "--max_seq_length=16", f"--output_dir={output_dir}",
            *extra)


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_run_stopped_by_sigterm_resumes_to_the_uninterrupted_runs_weights(inputs, tmp_path):
    straight = call_entry_point(ENTRY, *_args(inputs, tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert "trained 8 steps" in straight.stdout  # 16 pairs, 2 epochs of 4 full batches

    stopped_dir = tmp_path / "stopped"
    command = [sys.executable, "-m", ENTRY, *_args(inputs, stopped_dir)]
    first = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES=""))
    deadline = time.time() + 300
    log = stopped_dir / "log.txt"
    while not (log.exists() and "step 2/8" in log.read_text()):
        assert first.poll() is None and time.time() < deadline, first.stderr.read()[-3000:]
        time.sleep(0.05)
    first.send_signal(signal.SIGTERM)
    stderr = first.communicate(timeout=300)[1]
    assert first.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert "Stopped by SIGTERM at step" in stderr and "Traceback" not in stderr
    assert "16 pairs; skipped 1 with an empty anchor or positive" in stderr
    assert not (stopped_dir / "modules.json").exists()  # the model is written at the end

    resumed = call_entry_point(ENTRY, *_args(inputs, stopped_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Learning rate from step" in log.read_text()  # restored, not started again
    ours, theirs = (load_file(str(d / "model.safetensors")) for d in
                    (stopped_dir, tmp_path / "straight"))
    assert ours.keys() == theirs.keys()
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], atol=1e-6, err_msg=name)
    assert {"modules.json", "sentence_bert_config.json", "tokenizer.json", "1_Pooling",
            "2_Normalize", "flags.txt"} <= set(os.listdir(stopped_dir))


@pytest.mark.parametrize("extra, fragments", [
    (["--positive_column=answer"], ["missing column(s) ['answer']", "the row has ['n', 'p', 'q']"]),
    (["--train_batch_size=16"], ["batch size 16 is above the 8 distinct anchor texts"]),
    (["--negative_column=n", "--loss=multiple_negatives_symmetric_ranking"],
     ["--negative_column=n", "takes (anchor, positive) pairs only"]),
    (["--matryoshka_dims=64,8"],
     ["--matryoshka_dims=64,8", "[64] are above the embedding width 12"]),
])
def test_bad_input_is_one_line_and_writes_nothing(inputs, tmp_path, extra, fragments):
    result = call_entry_point(ENTRY, *_args(inputs, tmp_path / "out", *extra))
    assert_user_error(result, *fragments)
    assert not (tmp_path / "out").exists()


def test_an_output_dir_of_something_else_or_another_run_is_refused(inputs, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    result = call_entry_point(ENTRY, *_args(inputs, other))
    assert_user_error(result, "holds files of something other than a sentence-embeddings run",
                      "notes.txt")
    run = tmp_path / "run"  # another run's settings and a checkpoint of its own
    run.mkdir()
    settings = SentenceEmbeddingOptions(
        init_checkpoint=str(inputs / "model"), train_file=str(inputs / "pairs.jsonl"),
        output_dir=str(run), anchor_column="q", positive_column="p", train_batch_size=4,
        num_train_epochs=2, learning_rate=5e-4, steps_per_loop=1, save_checkpoints_steps=2,
        max_seq_length=16)  # this test's run, but for --learning_rate
    (run / "flags.txt").write_text("\n".join(settings_lines(dataclasses.asdict(settings))))
    (run / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')
    before = snapshot(run)
    result = call_entry_point(ENTRY, *_args(inputs, run))
    assert_user_error(result, "holds a run with other settings",
                      "--learning_rate: 0.0005 there, 0.001 here")
    assert snapshot(run) == before
