"""The record and vocab pipelines on Dask's distributed scheduler (Beam's DaskRunner).

A local cluster of two worker processes, started here, stands in for a real one (`dask
scheduler` + `dask worker`): its records and vocab must be the DirectRunner's, byte for byte.
"""

import glob
import gzip
import logging
import os
import socket
import subprocess
import sys

import distributed
import pytest

from bert_tf import errors
from bert_tf.data import beam_runner, document_reader
from bert_tf.data.records import beam_pipeline, beam_vocab
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records.record_options import Options
from tests.data.conftest import HELDOUT, VOCAB

pytestmark = [pytest.mark.beam, pytest.mark.dask]  # runs Beam on a local Dask cluster

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_OPTIONS = Options(vocab_file=VOCAB, dupe_factor=2, random_seed=5)


@pytest.fixture(scope="module")
def dask_client(request):
    """A client of a two-process local Dask cluster whose workers import this checkout's bert_tf."""
    env = {"PYTHONPATH": os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)}
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env=env, death_timeout=120)
    request.addfinalizer(cluster.close)
    client = distributed.Client(cluster, timeout=60)
    request.addfinalizer(client.close)
    client.wait_for_workers(2, timeout=120)
    import bert_tf

    assert set(client.run(lambda: __import__("bert_tf").__file__).values()) == {bert_tf.__file__}
    return client


def _dask(client):
    return f"runner=DaskRunner,dask_client_address={client.scheduler.address}"


def _corpus(tmp_path, parts=4):
    """The held-out corpus in `parts` files: the Dask run reads and tokenizes them in parallel."""
    with gzip.open(HELDOUT, "rt", encoding="utf-8") as f:
        documents = f.read().strip("\n").split("\n\n")
    for i in range(parts):
        part = documents[i * len(documents) // parts:(i + 1) * len(documents) // parts]
        (tmp_path / f"part{i}.txt").write_text("\n\n".join(part) + "\n", encoding="utf-8")
    return str(tmp_path / "part*.txt")


def _tasks_per_worker(client):
    return client.run(lambda dask_worker: dask_worker.state.transition_counter)


@pytest.mark.slow
def test_records_on_dask_are_the_direct_runners(dask_client, tmp_path):
    corpus = _corpus(tmp_path)
    before = _tasks_per_worker(dask_client)
    on_dask = cpd.create_pretraining_data(corpus, str(tmp_path / "dask"), _OPTIONS,
                                          num_output_shards=3,
                                          beam_pipeline_options=_dask(dask_client))
    after = _tasks_per_worker(dask_client)
    assert all(after[w] > before[w] for w in after)  # Both workers took part.
    direct = cpd.create_pretraining_data(corpus, str(tmp_path / "direct"), _OPTIONS,
                                         num_output_shards=3)
    # The counts come through the data (the DaskRunner has no metrics).
    assert {k: on_dask[k] for k in beam_pipeline.COUNTERS} == {k: direct[k]
                                                               for k in beam_pipeline.COUNTERS}
    assert on_dask["documents"] == 59 and on_dask["instances"] > 800
    assert [open(p, "rb").read() for p in on_dask["output_files"]] == \
        [open(p, "rb").read() for p in direct["output_files"]]
    assert sorted(glob.glob(str(tmp_path / "dask*"))) == on_dask["output_files"]  # No runs left.


@pytest.mark.slow
def test_vocab_on_dask_is_the_direct_runners(dask_client, tmp_path):
    corpus = _corpus(tmp_path)
    on_dask = beam_vocab.learn_vocab(corpus, str(tmp_path / "dask.tsv"), 500,
                                     beam_pipeline_options=_dask(dask_client))
    direct = beam_vocab.learn_vocab(corpus, str(tmp_path / "direct.tsv"), 500)
    assert on_dask == direct and len(direct) > 400
    assert (tmp_path / "dask.tsv").read_bytes() == (tmp_path / "direct.tsv").read_bytes()
    # Beam's file sink left beam-temp-* folders on Dask; the counts file is written by one step.
    parts = [f"part{i}.txt" for i in range(4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask.tsv", "direct.tsv", *parts]


@pytest.mark.slow
def test_bad_input_found_by_a_dask_worker_is_one_line(dask_client, tmp_path):
    (tmp_path / "a.txt").write_text("One.\nTwo.\n\nThree.\nFour.\n", encoding="utf-8")
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    with pytest.raises(document_reader.InputError) as error:
        cpd.create_pretraining_data(f"{tmp_path}/a.txt,{tmp_path}/b.txt.gz",
                                    str(tmp_path / "out" / "r"), _OPTIONS,
                                    beam_pipeline_options=_dask(dask_client))
    assert "b.txt.gz" in str(error.value) and "\n" not in str(error.value)
    assert glob.glob(str(tmp_path / "out" / "*")) == []


@pytest.mark.slow
def test_fewer_input_files_than_dask_threads_is_one_warning(dask_client, tmp_path, caplog):
    corpus = _corpus(tmp_path, parts=2)
    with caplog.at_level(logging.WARNING, logger="absl"):
        beam_vocab.learn_vocab(corpus, str(tmp_path / "two.tsv"), 200,
                               beam_pipeline_options=_dask(dask_client))
        assert not [r for r in caplog.records if "Dask:" in r.getMessage()]
        beam_vocab.learn_vocab(f"{tmp_path}/part0.txt", str(tmp_path / "one.tsv"), 200,
                               beam_pipeline_options=_dask(dask_client))
    assert [r.getMessage() for r in caplog.records if "Dask:" in r.getMessage()] == [
        "Dask: 1 bag partition(s) (one per input file) for 2 worker threads: 1 stay idle the "
        "whole run; split the input into at least 2 files."]


@pytest.mark.subprocess
def test_dask_address_nothing_listens_on_is_one_line(tmp_path):
    with socket.socket() as s:  # A port nothing listens on once closed.
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "text.txt").write_text("Some words here.\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "tools", "build_vocab.py"),
            f"--input_file={tmp_path}/text.txt",
            f"--output_file={tmp_path}/vocab.txt",
            "--vocab_size=100",
            f"--beam_pipeline_options=runner=DaskRunner,dask_client_address=tcp://127.0.0.1:{port},"
            "dask_connection_timeout=1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("build_vocab: ")]
    assert len(lines) == 1, result.stderr
    assert f"no Dask scheduler answered at tcp://127.0.0.1:{port}" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["text.txt"]


def test_without_distributed_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails.
    with pytest.raises(errors.MissingExtraError, match=r"pip install 'bert_tf\[beam\]'"):
        beam_runner.pipeline_options("runner=DaskRunner,dask_client_address=tcp://127.0.0.1:8786")


def test_dask_partitions_default_to_one_per_input_file():
    options = beam_runner.pipeline_options("runner=DaskRunner")
    assert beam_runner.dask_partitions(options, 3) == 3
    fresh = beam_runner.pipeline_options("runner=DaskRunner")  # the call above set options'
    assert beam_runner.dask_partitions(fresh, 10_000) == 256
    given = beam_runner.pipeline_options("runner=DaskRunner,dask_npartitions=7")
    assert beam_runner.dask_partitions(given, 3) == 7
    assert beam_runner.dask_partitions(beam_runner.pipeline_options(None), 3) is None
