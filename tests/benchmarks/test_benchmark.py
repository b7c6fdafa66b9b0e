"""`benchmarks/benchmark.py` as a user runs it: one JSON row per measurement (tiny shape, one
repeat)."""

import json
import os
import subprocess
import sys

import pytest

# each runs benchmarks/benchmark.py as a user does
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_encoder_benchmark_prints_a_row_per_implementation():
    command = [sys.executable, "benchmarks/benchmark.py", "--what=encoder",
               "--bert_config_file=official_configs/bert_config_tiny.json", "--batch_size=2",
               "--seq_length=8", "--repeats=1"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {row["implementation"]: row for row in map(json.loads, result.stdout.split("\n")[:-1])}
    assert rows["bert_tf"]["seq_per_s"] > 0 and rows["bert_tf"]["batch"] == 2
    # keras-hub is a dev-only peer: either measured beside ours or reported as not installed.
    assert "seq_per_s" in rows["keras_hub"] or "not installed" in rows["keras_hub"]["error"]


def test_fit_strings_benchmark_times_ours_beside_keras_hub(tiny_model_dir):
    command = [sys.executable, "benchmarks/benchmark.py", "--what=fit_strings",
               f"--model_dir={tiny_model_dir}", "--batch_size=4", "--seq_length=32",
               "--steps_per_repeat=2", "--repeats=1", "--num_sentences=64"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {row["implementation"]: row for row in map(json.loads, result.stdout.split("\n")[:-1])}
    ours = rows["bert_tf TextClassifier.fit(strings)"]
    assert ours["examples_per_s"] > 0 and ours["what"] == "fit_strings" and ours["steps"] == 2
    grouped = rows["bert_tf TextClassifier.fit(strings, group_by_length=True)"]
    assert grouped["examples_per_s"] > 0 and grouped["dev_sentences"] == 12
    # One epoch on 52 sentences, accuracy on the other 12 (each dev sentence counts 1/12;
    # the tool prints floats to 3 decimals, so 2/12 reads 0.167).
    assert ours["train_sentences"] == 52 and ours["dev_sentences"] == 12
    for row in rows.values():
        if "examples_per_s" in row:
            correct = row["dev_accuracy"] * 12
            assert round(correct) in range(13) and abs(correct - round(correct)) <= 12 * 5e-4, row
    # predict on a list and on a dataset of the same strings, two and then the 12 dev ones.
    latency = [(row["implementation"], row["texts"]) for row in
               map(json.loads, result.stdout.split("\n")[:-1])
               if row["what"] == "predict_strings" and row["implementation"].startswith("bert_tf")]
    assert latency == [("bert_tf TextClassifier.predict(list)", 2),
                       ("bert_tf TextClassifier.predict(dataset)", 2),
                       ("bert_tf TextClassifier.predict(list)", 12),
                       ("bert_tf TextClassifier.predict(dataset)", 12)]


def test_text_pipeline_benchmark_reports_cpu_per_sequence(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text(
        "\n\n".join(
            "\n".join(f"document {d} says line {s} of the text ." for s in range(4))
            for d in range(6)
        )
        + "\n"
    )
    command = [sys.executable, "benchmarks/benchmark.py", "--what=text_pipeline",
               f"--text_file={text}", "--batch_size=4", "--seq_length=16",
               "--max_predictions_per_seq=2", "--pipeline_batches=3"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    row, = map(json.loads, result.stdout.split("\n")[:-1])
    assert row["batches"] == 3 and row["batch_size"] == 4 and row["seq_length"] == 16
    assert row["examples_per_s"] > 0 and row["cpu_ms_per_sequence"] > 0


def test_corpus_benchmark_times_the_pipeline_beside_the_saved_model(tiny_model_dir):
    command = [sys.executable, "benchmarks/benchmark.py", "--what=corpus",
               f"--model_dir={tiny_model_dir}", "--batch_size=8", "--num_sentences=40"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in result.stdout.split("\n")[:-1]]
    assert [row["lines"] for row in rows] == [40, 40, 40]
    assert all(row["lines_per_s"] > 0 and row["batch_size"] == 8 for row in rows)
    assert "overhead_ms_per_line" in rows[-1]
