"""Result shards: complete under their final name only, and removed whole after a failed run."""

import json
import os

import pytest

from bert_tf.corpus_inference import writers

parquet = pytest.importorskip("pyarrow.parquet", reason="pyarrow comes with apache-beam")

RECORDS = [{"id": "a.txt:1", "label": ["x", "y"], "probabilities": [0.25, 0.75]},
           {"id": "a.txt:2", "label": [], "probabilities": [0.5, 0.5]}]


@pytest.mark.parametrize("output_format", writers.FORMATS)
def test_a_shard_round_trips_and_leaves_no_temporary_file(tmp_path, output_format):
    path = writers.write_shard(str(tmp_path), 1, 3, output_format, RECORDS)
    assert os.listdir(tmp_path) == [f"part-00001-of-00003.{output_format}"]
    if output_format == "parquet":
        assert parquet.read_table(path).to_pylist() == RECORDS
    else:
        assert [json.loads(line) for line in open(path, encoding="utf-8")] == RECORDS


def test_a_failed_run_removes_its_shards_and_temporary_files(tmp_path):
    writers.write_shard(str(tmp_path), 0, 2, "jsonl", RECORDS)
    (tmp_path / ".part-00001-of-00002.jsonl.tmp-1234abcd").write_text("{half")
    writers.remove_partial(str(tmp_path))
    assert writers.shards(str(tmp_path)) == [f"{tmp_path}/part-00000-of-00002.jsonl"]
    writers.remove_partial(str(tmp_path), shards_too=True)
    assert os.listdir(tmp_path) == []
