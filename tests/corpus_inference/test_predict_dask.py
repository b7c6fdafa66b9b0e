"""tools/predict.py on Dask's distributed scheduler (Beam's DaskRunner): a local cluster of two
worker processes stands in for a real one; its results must equal the model's `predict`."""

import numpy as np
import pytest

from bert_tf.corpus_inference.windows import window_spans
from bert_tf.keras_tasks import SentenceEncoder
from tests.corpus_inference.conftest import write_corpus
from tests.corpus_inference.test_predict_tool import read_results
from tests.data.records.test_beam_dask import dask_client  # noqa: F401  (one cluster per module)
from tests.tools.conftest import run_tool

pytestmark = pytest.mark.slow


def _tasks_per_worker(client):
    return client.run(lambda dask_worker: dask_worker.state.transition_counter)


def test_embeddings_on_two_dask_workers_equal_predict(dask_client, tiny_model_dir, tmp_path):  # noqa: F811
    pattern, texts = write_corpus(tmp_path)
    output = tmp_path / "embeddings"
    before = _tasks_per_worker(dask_client)
    result = run_tool("predict", f"--model={tiny_model_dir}", f"--input_file={pattern}",
                      f"--output={output}", "--output_format=jsonl", "--num_shards=2",
                      "--max_seq_length=16", "--long_lines=windows", "--doc_stride=4",
                      f"--beam_pipeline_options=runner=DaskRunner,"
                      f"dask_client_address={dask_client.scheduler.address}")
    assert result.returncode == 0, result.stderr[-3000:]
    after = _tasks_per_worker(dask_client)
    assert all(after[w] > before[w] for w in after)  # Both workers took part.
    assert result.stdout.splitlines()[-1] == f"wrote 5 results in 2 jsonl shard(s) to {output}"
    assert "1 read as windows" in result.stdout
    results = read_results(output)
    assert sorted(results) == sorted(texts)
    encoder = SentenceEncoder.from_pretrained(tiny_model_dir, max_seq_length=16)
    short = [key for key, text in texts.items() if len(text.split()) < 14]  # one window each
    expected = encoder.predict([texts[key] for key in short], verbose=0)
    np.testing.assert_allclose([results[key]["embedding"] for key in short], expected, atol=1e-5)
    # The long line: 30 one-piece words, windows of 14 pieces 4 apart (test_windows checks
    # such splits by hand), their embeddings averaged and normalized again.
    (long_key,) = set(texts) - set(short)
    words = texts[long_key].split()
    windows = encoder.predict([" ".join(words[s:e]) for s, e in window_spans(30, 14, 4)], verbose=0)
    mean = windows.mean(0)
    np.testing.assert_allclose(results[long_key]["embedding"], mean / np.linalg.norm(mean),
                               atol=1e-5)
