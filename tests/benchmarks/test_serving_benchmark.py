"""`benchmarks/benchmark.py --what=serving` and its worker, run as a user runs them (tiny model)."""

import json
import os
import subprocess
import sys

import pytest

from benchmarks.serving import computed_tokens

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LINES = ["In the beginning God created the heaven and the earth.", "Amen.",
         "And the earth was without form, and void; and darkness was upon the face of the deep.",
         "Jesus wept.", "Selah.", "And God said, Let there be light: and there was light."]


@pytest.mark.slow
@pytest.mark.subprocess  # runs benchmarks/benchmark.py as a user does
def test_serving_benchmark_serves_lines_in_order_on_every_system(tiny_model_dir, minilm_hf_dir,
                                                                 tmp_path):
    text_file = tmp_path / "lines.txt"
    text_file.write_text("\n".join(LINES) + "\n")
    command = [sys.executable, "benchmarks/benchmark.py", "--what=serving",
               f"--model_dir={tiny_model_dir}", f"--hf_dir={minilm_hf_dir}",
               f"--serving_text_file={text_file}", "--serving_batch_size=3", "--repeats=1",
               "--latency_requests=2", "--seq_length=32", f"--ref_python={tmp_path}/no_python"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[0]["lines"] == len(LINES)
    machine = next(row for row in rows if row.get("what") == "machine")
    assert machine["cpu"] and machine["float32_gflop_per_s"] > 0 and machine["load"] >= 0
    by_system = {(row["system"], row.get("batch_size")): row for row in rows if "system" in row}
    packed, padded = by_system[("bert_tf", 3)], by_system[("bert_tf padded", 3)]
    assert packed["lines_per_s"] > 0 and padded["lines_per_s"] > 0
    assert packed["real_share_of_computed"] == 1.0 > padded["real_share_of_computed"]
    assert by_system[("bert_tf", 1)]["p50_ms"] > 0
    # The ONNX export, strings in: the encoder (tiny) and MiniLM's sentence embeddings.
    assert by_system[("bert_tf onnx", 3)]["lines_per_s"] > 0
    assert by_system[("bert_tf onnx sentence", 1)]["p50_ms"] > 0
    # Peers without their packages are reported, not fatal.
    assert "error" in by_system[("hf_torch", None)]


@pytest.mark.subprocess  # the worker's argparse, before any TensorFlow import (0.1 s)
def test_worker_refuses_an_unknown_system_in_one_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "benchmarks/serving_worker.py", "--system=nope", "--model_dir=x",
         "--hf_dir=x", "--lines_file=x", f"--work_dir={tmp_path}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr.splitlines()[-1]


def test_computed_tokens_counts_real_tokens_for_bert_tf_and_the_padding_of_the_others():
    lengths = [3, 10, 5, 128, 2, 7, 9]  # the last line is not in a full batch of 2
    assert computed_tokens(lengths, 2, "bert_tf", 128) == 3 + 10 + 5 + 128 + 2 + 7
    assert computed_tokens(lengths, 2, "hf_torch", 128) == 2 * (10 + 128 + 7)
    assert computed_tokens(lengths, 2, "bert_tf padded", 128) == 2 * (16 + 128 + 8)
    assert computed_tokens(lengths, 2, "keras_hub", 128) == 3 * 2 * 128
