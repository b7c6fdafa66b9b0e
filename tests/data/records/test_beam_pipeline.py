"""The Beam pipeline: records are a function of input, options and seed; clear errors."""

import glob
import sys

import pytest
import tensorflow as tf

from bert_tf import errors
from bert_tf.data import document_reader
from bert_tf.data.records import beam_pipeline
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records.record_options import Options, check_options
from tests.data.conftest import HELDOUT, VOCAB

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam

_OPTIONS = Options(vocab_file=VOCAB, dupe_factor=1, random_seed=11)


def _documents():
    return [d.sentences for d in document_reader.read_documents([HELDOUT])]


def _write(path, documents):
    path.write_text("".join("\n".join(d) + "\n\n" for d in documents), encoding="utf-8")
    return str(path)


def _records(result):
    return [[r.numpy() for r in tf.data.TFRecordDataset(p)] for p in result["output_files"]]


def test_records_depend_on_the_documents_not_their_order_or_files(tmp_path):
    documents = _documents()
    one = cpd.create_pretraining_data(_write(tmp_path / "all.txt", documents), str(tmp_path / "a"),
                                      _OPTIONS, num_output_shards=2)
    half = len(documents) // 2
    files = (f"{_write(tmp_path / 'y.txt', documents[:half][::-1])},"
             f"{_write(tmp_path / 'x.txt', documents[half:][::-1])}")
    other = cpd.create_pretraining_data(files, str(tmp_path / "b"), _OPTIONS, num_output_shards=2)
    assert one["instances"] == other["instances"] > 400
    assert [open(p, "rb").read() for p in one["output_files"]] == [open(p, "rb").read()
                                                                   for p in other["output_files"]]


def test_identical_documents_get_their_own_draws(tmp_path):
    documents = _documents()
    once = cpd.create_pretraining_data(_write(tmp_path / "once.txt", documents),
                                       str(tmp_path / "a"), _OPTIONS)
    twice = cpd.create_pretraining_data(_write(tmp_path / "twice.txt", documents + documents),
                                        str(tmp_path / "b"), _OPTIONS)
    assert twice["documents"] == 2 * once["documents"]
    records = _records(twice)[0]
    assert len(records) == twice["instances"]
    # Copies of a document with the same draws would give each record twice.
    assert len(set(records)) > 0.95 * len(records)
    assert abs(twice["instances"] - 2 * once["instances"]) < 0.1 * once["instances"]


@pytest.mark.slow
def test_same_records_for_one_worker_and_two_processes(tmp_path):
    one = cpd.create_pretraining_data(HELDOUT, str(tmp_path / "one"), _OPTIONS, num_output_shards=3)
    two = cpd.create_pretraining_data(
        HELDOUT,
        str(tmp_path / "two"),
        _OPTIONS,
        num_output_shards=3,
        beam_pipeline_options="runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing",
    )
    assert {k: one[k] for k in beam_pipeline.COUNTERS} == {k: two[k]
                                                           for k in beam_pipeline.COUNTERS}
    parsed = [[tf.train.Example.FromString(r) for r in shard] for shard in _records(two)]
    assert parsed == [[tf.train.Example.FromString(r) for r in shard] for shard in _records(one)]
    assert sum(len(shard) for shard in parsed) == one["instances"] > 400
    assert [open(p, "rb").read() for p in one["output_files"]] == [open(p, "rb").read()
                                                                   for p in two["output_files"]]
    # No temporary files left.
    assert sorted(glob.glob(str(tmp_path / "two*"))) == two["output_files"]


def test_existing_output_is_refused_before_any_work(tmp_path):
    (tmp_path / "r-00001-of-00002").write_bytes(b"earlier run")
    with pytest.raises(ValueError, match="output file .*r-00001-of-00002 exists: delete it"):
        cpd.create_pretraining_data(HELDOUT, str(tmp_path / "r"), _OPTIONS, num_output_shards=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r-00001-of-00002"]
    assert (tmp_path / "r-00001-of-00002").read_bytes() == b"earlier run"


def test_glob_matching_nothing(tmp_path):
    with pytest.raises(document_reader.InputError, match="matches no file"):
        cpd.create_pretraining_data(f"{tmp_path}/*.txt", str(tmp_path / "r"), _OPTIONS)


def test_error_inside_the_pipeline_is_one_line(tmp_path):
    # Found by a worker, not by the checks before the run: the second file is not gzip.
    documents = _documents()
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    with pytest.raises(document_reader.InputError) as error:
        cpd.create_pretraining_data(
            f"{_write(tmp_path / 'a.txt', documents[:5])},{tmp_path}/b.txt.gz",
            str(tmp_path / "out" / "r"),
            _OPTIONS,
        )
    assert "b.txt.gz" in str(error.value) and "\n" not in str(error.value)
    assert glob.glob(str(tmp_path / "out" / "*")) == []


def test_small_buckets_are_refused():
    with pytest.raises(ValueError, match="documents_per_bucket must be at least 50"):
        check_options(Options(vocab_file=VOCAB, documents_per_bucket=10))


def test_without_beam_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "apache_beam", None)  # `import apache_beam` now fails.
    with pytest.raises(errors.MissingExtraError, match=r"pip install 'bert_tf\[beam\]'"):
        cpd.create_pretraining_data(HELDOUT, str(tmp_path / "r"), _OPTIONS)


def test_records_the_runner_loses_are_reported_and_the_output_removed(tmp_path, monkeypatch):
    real_write = beam_pipeline._write

    def write_dropping_one(shard, paths, runs_dir):  # a runner that lost one run in the shuffle
        index, runs = shard
        return real_write((index, [r for r in runs if r is not None][1:]), paths, runs_dir)

    monkeypatch.setattr(beam_pipeline, "_write", write_dropping_one)
    with pytest.raises(cpd.DataLossError, match=r"the Beam runner lost data: (\d+) documents read, "
                       r"\1 tokenized; "
                       r"\d+ records made, \d+ written; the output files were removed"):
        cpd.create_pretraining_data(HELDOUT, str(tmp_path / "r"), _OPTIONS, num_output_shards=2)
    assert list(tmp_path.iterdir()) == []
