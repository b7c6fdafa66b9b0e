"""The machine-speed line that closes a run: wall time and a matmul rate measured on the spot."""

import re

from bert_tf.reporting.machine_speed import speed_line


def test_speed_line_quotes_the_time_and_a_measured_rate():
    line = speed_line(125.4, "mixed_bfloat16")
    match = re.fullmatch(r"This run took 2 min 5 s; this machine's bfloat16 matmul rate: "
                         r"(\d+) GFLOP/s \(1024² matmuls, measured now; quote both to compare "
                         r"machines\)\.", line)
    assert match and int(match.group(1)) > 0
    assert speed_line(42.0, "float32").startswith("This run took 42 s; this machine's float32")

