"""`benchmark.py --what=sentence_training` end to end on a tiny model and a few pairs: our runs'
rows (wall time, peak RSS, retrieval and STS scores of the folder written), the cached run's
memory row, and the peer's row saying why it is missing (this venv has no torch)."""

import json
import os
import subprocess
import sys

import pytest

from tests import fixtures

# runs benchmarks/benchmark.py, which runs run_sentence_embeddings, as a user does
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PAIRS, QUERIES, DISTRACTORS, STS_PAIRS = 32, 4, 4, 8  # 32 pairs: one batch of the recipe's


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("sentence_training") / "model")
    fixtures.write_tiny_model_dir(model_dir, vocab_file=fixtures.minilm_vocab_file(),
                                  lower_case=True, max_position_embeddings=128)
    work_dir = str(tmp_path_factory.mktemp("work"))
    command = [sys.executable, "benchmarks/benchmark.py", "--what=sentence_training",
               f"--model_dir={model_dir}", f"--ref_python={sys.executable}", "--seed=0",
               f"--num_sentences={PAIRS}", f"--num_queries={QUERIES}",
               f"--num_distractors={DISTRACTORS}", f"--sts_pairs={STS_PAIRS}",
               "--cached_batch_size=8", f"--work_dir={work_dir}"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines()]


def _by(rows, implementation):
    return [r for r in rows if r.get("implementation") == implementation]


def test_machine_and_load_come_first_and_last(rows):
    assert rows[0]["what"] == "machine" and rows[0]["float32_gflop_per_s"] > 0
    assert rows[-1]["what"] == "load_after" and rows[-1]["load"] >= 0


def test_ours_trains_a_folder_that_is_scored(rows):
    run, summary = _by(rows, "bert_tf run_sentence_embeddings")
    assert (run["pairs"], run["queries"], run["corpus"], run["sts_pairs"]) == (
        PAIRS, QUERIES, QUERIES + DISTRACTORS, STS_PAIRS)
    assert run["wall_seconds"] > 0 and run["peak_rss_mib"] > 0
    assert 0 <= run["ndcg@10"] <= 1 and 0 <= run["mrr@10"] <= 1
    assert -1 <= run["sts_spearman"] <= 1
    assert summary["seeds"] == 1 and summary["wall_seconds"] == run["wall_seconds"]
    assert "speedup_vs_peer" not in summary  # no peer to compare with


def test_the_cached_run_gives_its_peak_memory(rows):
    cached, = _by(rows, "bert_tf run_sentence_embeddings cached")
    assert cached["batch_size"] == 8 and cached["mini_batch_size"] == 32
    assert cached["peak_rss_mib"] > 0 and cached["wall_seconds"] > 0


def test_the_missing_peer_says_why(rows):
    peer, = _by(rows, "sentence-transformers PyTorch")
    assert peer["error"].startswith("sentence-transformers PyTorch failed (exit 1)")
