"""The external merge sort: runs merged in passes equal one in-memory sort; nothing is left
behind."""

import random

import pytest

from bert_tf.data.records import sorted_runs


def _random_runs(folder, num_runs, rng):
    runs, everything = [], []
    for i in range(num_runs):
        keyed = [(rng.getrandbits(64), rng.randbytes(rng.randrange(0, 40)))
                 for _ in range(rng.randrange(0, 300))]
        keyed += [(keyed[0][0], b"\x00same key\x00")] if keyed else []  # ties break on the record
        runs.append(f"{folder}/run-{i}")
        sorted_runs.write_run(runs[-1], keyed)
        everything += keyed
    return runs, [record for _, record in sorted(everything)]


@pytest.mark.parametrize("num_runs, fan_in", [(1, 64), (7, 64), (30, 4), (9, 2)])
def test_merge_equals_one_sort(tmp_path, num_runs, fan_in):
    runs, expected = _random_runs(tmp_path, num_runs, random.Random(num_runs * 100 + fan_in))
    merged = list(sorted_runs.merge_runs(runs, f"{tmp_path}/merge", fan_in=fan_in))
    assert merged == expected and len(expected) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"run-{i}" for i in range(num_runs))


def test_records_ending_in_zero_bytes_keep_them(tmp_path):
    # Serialized examples often end in padding zeros; a numpy "S" array would strip them.
    sorted_runs.write_run(f"{tmp_path}/run", [(2, b"a\x00\x00"), (1, b"\x00")])
    assert list(sorted_runs.merge_runs([f"{tmp_path}/run"], f"{tmp_path}/merge")) == [b"\x00",
                                                                                      b"a\x00\x00"]


def test_no_runs_no_records(tmp_path):
    assert list(sorted_runs.merge_runs([], f"{tmp_path}/merge")) == []
