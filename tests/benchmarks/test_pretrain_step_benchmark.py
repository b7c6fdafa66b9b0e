"""`benchmarks/benchmark.py --what=pretrain_step` as a user runs it (tiny shape, one repeat)."""

import json
import os
import subprocess
import sys

import pytest

# each runs benchmarks/benchmark.py as a user does
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_pretrain_step_benchmark_rows_carry_the_machine_matmul_rate():
    command = [sys.executable, "benchmarks/benchmark.py", "--what=pretrain_step",
               "--bert_config_file=official_configs/bert_config_tiny.json", "--batch_size=2",
               "--seq_length=16", "--max_predictions_per_seq=3", "--steps_per_repeat=2",
               "--repeats=1", "--profile"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = list(map(json.loads, result.stdout.split("\n")[:-1]))
    matmul = next(row for row in rows if row.get("what") == "matmul")
    ours = next(row for row in rows if row.get("implementation", "").startswith("bert_tf"))
    assert matmul["dtype"] == "float32" and matmul["gflop_per_s"] > 0
    # The share is the row's model FLOP/s over the measured rate, both printed.
    assert abs(ours["share_of_matmul_rate"] - ours["gflop_per_s"] / matmul["gflop_per_s"]) < 2e-3
    # --profile: op time per step by model part, matmuls among the parts' ops.
    profile = next(row for row in rows if "matmul_share_of_op_time" in row)
    assert 0 < profile["matmul_share_of_op_time"] < 1
    parts = {key.split()[-1]: ms for key, ms in profile.items() if "by_part" in key}
    assert {"attention", "feed_forward", "masked_lm"} <= set(parts) and min(parts.values()) >= 0
