"""`benchmark.py --what=finetune_peers` end to end on a tiny model: our rows always, and the
PyTorch peer's rows or a row saying why it is missing (this venv has no torch)."""

import json
import os
import subprocess
import sys

import pytest

from tests import fixtures

# runs benchmarks/benchmark.py as a user does
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EPOCHS = {"sentences": 2, "ner": 3}
OURS = ["bert_tf fit(strings)", "bert_tf fit(strings) packed_training"]
PEER = "transformers PyTorch"
TRAIN, DEV = 24, 8


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """The command's rows on 24 train and 8 dev examples of each task, seed 0, ours padded
    and packed.

    The tiny model has 128 positions (the sentence recipe's max length); the peer runs in
    this test's Python, so without torch its row carries the import error."""
    model_dir = str(tmp_path_factory.mktemp("finetune_peers") / "model")
    fixtures.write_tiny_model_dir(model_dir, vocab_file=fixtures.minilm_vocab_file(),
                                  lower_case=True, max_position_embeddings=128)
    command = [sys.executable, "benchmarks/benchmark.py", "--what=finetune_peers",
               f"--model_dir={model_dir}", f"--ref_python={sys.executable}", "--seed=0",
               "--packed_training=false", "--packed_training=true",
               f"--finetune_train_examples={TRAIN}", f"--finetune_dev_examples={DEV}"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_first_row_names_the_machine(rows):
    machine = rows[0]
    assert machine["what"] == "machine" and machine["threads"] == 2 and machine["load"] >= 0
    assert machine["float32_matmul_gflop_per_s"] > 0  # the rate a ratio is quoted beside


@pytest.mark.parametrize("ours", OURS)
@pytest.mark.parametrize("task", ["sentences", "ner"])
def test_ours_gives_a_row_per_epoch_with_time_and_dev_metric(rows, task, ours):
    epochs = [r for r in rows if r.get("implementation") == ours and r["task"] == task
              and "epoch" in r]
    assert [r["epoch"] for r in epochs] == list(range(1, EPOCHS[task] + 1))
    for row in epochs:
        assert row["seed"] == 0 and row["train_examples"] == TRAIN and row["dev_examples"] == DEV
        assert row["seconds"] > 0 and row["examples_per_s"] > 0
        assert 0 <= row["dev_metric"] <= 100 and row["load_start"] >= 0 and row["load_end"] >= 0
    if task == "sentences":  # accuracy in points over 8 sentences: a multiple of 12.5
        assert all(row["dev_metric"] % 12.5 == 0 for row in epochs)
    summary, = [r for r in rows if r.get("what") == "summary" and r["task"] == task
                and r["implementation"] == ours]
    assert summary["seeds"] == 1 and summary["steady_seconds"] == epochs[-1]["seconds"]


@pytest.mark.parametrize("task", ["sentences", "ner"])
def test_peer_gives_rows_or_says_why_not(rows, task):
    peer = [r for r in rows if r.get("implementation") == PEER and r["task"] == task
            and "seed" in r]
    summary = {r["implementation"]: r for r in rows
               if r.get("what") == "summary" and r["task"] == task}
    if "error" in peer[0]:
        assert len(peer) == 1 and "torch" in peer[0]["error"]
        assert summary[PEER]["error"] == peer[0]["error"]
        assert all("time_vs_peer" not in summary[ours] for ours in OURS)
    else:
        assert [r["epoch"] for r in peer] == list(range(1, EPOCHS[task] + 1))
        assert all(r["seconds"] > 0 and 0 <= r["dev_metric"] <= 100 for r in peer)
        assert all(summary[ours]["time_vs_peer"] > 0 for ours in OURS)
