"""tools/predict.py as a user runs it on the DirectRunner: every head, every input and output
format, results equal to the task model's own `predict` on the same lines."""

import json
import os
import re

import numpy as np
import pytest

from bert_tf.keras_tasks import SentenceEncoder, TextClassifier, TokenClassifier
from tests.corpus_inference.conftest import LABELS, TAGS, write_corpus
from tests.tools.conftest import assert_user_error, run_tool

pyarrow = pytest.importorskip("pyarrow", reason="pyarrow comes with apache-beam (the beam extra)")
parquet = pytest.importorskip("pyarrow.parquet", reason="as above")

pytestmark = pytest.mark.slow  # each case starts a TensorFlow process and a Beam pipeline


def softmax(logits):
    exp = np.exp(logits - logits.max(-1, keepdims=True))
    return exp / exp.sum(-1, keepdims=True)


def read_results(output):
    """`{id: result}` of every shard in `output` (Parquet or JSON lines)."""
    results = {}
    for name in sorted(os.listdir(output)):
        path = os.path.join(output, name)
        if name.endswith(".parquet"):
            rows = parquet.read_table(path).to_pylist()
        else:
            rows = [json.loads(line) for line in open(path, encoding="utf-8")]
        results.update({row["id"]: row for row in rows})
    return results


def test_classifier_on_text_files_writes_parquet_shards_equal_to_predict(classifier_dir, tmp_path):
    pattern, texts = write_corpus(tmp_path)
    output = tmp_path / "preds"
    result = run_tool("predict", f"--model={classifier_dir}", f"--input_file={pattern}",
                      f"--output={output}", "--output_format=parquet", "--num_shards=2",
                      "--max_seq_length=16", "--batch_size=2", "--progress_every=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == f"wrote 5 results in 2 parquet shard(s) to {output}"
    assert re.search(r"^predicted 5/\d+ lines, [\d.]+ lines/s, ETA \d+ s$", result.stderr, re.M)
    assert "1 truncated, 0 read as windows; skipped 1 empty and 0 undecodable" in result.stdout
    assert sorted(os.listdir(output)) == ["part-00000-of-00002.parquet",
                                          "part-00001-of-00002.parquet"]
    results = read_results(output)
    assert sorted(results) == sorted(texts)
    logits = TextClassifier.from_pretrained(classifier_dir, max_seq_length=16).predict(
        list(texts.values()), verbose=0)
    expected = softmax(logits)
    got = np.array([results[key]["probabilities"] for key in texts])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert [results[key]["label"] for key in texts] == [LABELS[i] for i in expected.argmax(-1)]
    schema = parquet.read_schema(os.path.join(output, "part-00000-of-00002.parquet"))
    assert schema.field("probabilities").type == pyarrow.list_(pyarrow.float32(), 3)


def test_token_classifier_on_json_lines_with_ids_writes_tags(tagger_dir, tmp_path):
    texts = {7: "Ada Lovelace wrote programs", 9: "Charles Babbage built nothing at all"}
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps({"key": k, "body": t}) + "\n" for k, t in texts.items()) + "\n")
    output = tmp_path / "tags"
    result = run_tool("predict", f"--model={tagger_dir}", f"--input_file={tmp_path}/in.jsonl",
                      f"--output={output}", "--output_format=jsonl", "--text_column=body",
                      "--id_column=key")
    assert result.returncode == 0, result.stderr[-3000:]
    results = read_results(output)
    expected = TokenClassifier.from_pretrained(tagger_dir).predict(list(texts.values()))
    assert [results[k]["tags"] for k in texts] == expected
    assert all(tag in TAGS for k in texts for tag in results[k]["tags"])
    assert set(results[7]) == {"id", "tags"}


def test_encoder_on_parquet_writes_fixed_size_embeddings(tiny_model_dir, tmp_path):
    texts = ["A man plays a guitar.", "Stocks fell sharply today.", "A man plays a guitar."]
    parquet.write_table(pyarrow.table({"body": texts}), str(tmp_path / "in.parquet"))
    output = tmp_path / "embeddings"
    result = run_tool("predict", f"--model={tiny_model_dir}", f"--input_file={tmp_path}/in.parquet",
                      f"--output={output}", "--text_column=body", "--pooling=cls")
    assert result.returncode == 0, result.stderr[-3000:]
    results = read_results(output)
    ids = [f"{tmp_path}/in.parquet:{row}" for row in (1, 2, 3)]
    expected = SentenceEncoder.from_pretrained(tiny_model_dir, pooling="cls").predict(texts,
                                                                                      verbose=0)
    np.testing.assert_allclose([results[i]["embedding"] for i in ids], expected, atol=1e-5)
    schema = parquet.read_schema(os.path.join(output, "part-00000-of-00001.parquet"))
    embedding = schema.field("embedding").type
    assert pyarrow.types.is_fixed_size_list(embedding)
    assert (embedding.list_size, embedding.value_type) == (expected.shape[1], pyarrow.float32())


def test_a_column_the_input_lacks_is_one_line_and_nothing_is_written(classifier_dir, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"body": "A text."}\n')
    result = run_tool("predict", f"--model={classifier_dir}", f"--input_file={tmp_path}/in.jsonl",
                      f"--output={tmp_path}/out")
    assert_user_error(result,
                      f"predict: error: {tmp_path}/in.jsonl:1: no column 'text' (it has: body)")
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_an_output_folder_with_results_is_refused_and_kept(classifier_dir, tmp_path):
    pattern, _ = write_corpus(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "part-00000-of-00001.parquet").write_bytes(b"old results")
    result = run_tool("predict", f"--model={classifier_dir}", f"--input_file={pattern}",
                      f"--output={tmp_path}/out")
    assert_user_error(result, f"--output={tmp_path}/out: the output folder already exists")
    assert os.listdir(tmp_path / "out") == ["part-00000-of-00001.parquet"]


@pytest.mark.parametrize("flags, fragment", [
    (["--undecodable_lines=fail"], "b.txt:2: the line is not UTF-8"),
    (["--head=token_classifier"], "holds no fine-tuned token_classifier head"),
    (["--max_seq_length=65"], "max_seq_length=65 is above the model's max_position_embeddings=64"),
])
def test_a_bad_line_head_or_model_is_one_line(classifier_dir, tmp_path, flags, fragment):
    (tmp_path / "b.txt").write_bytes(b"Fine.\nBad \xff byte.\n")
    result = run_tool("predict", f"--model={classifier_dir}", f"--input_file={tmp_path}/b.txt",
                      f"--output={tmp_path}/out", *flags)
    assert_user_error(result, "predict: error: ", fragment)
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1, result.stderr
    assert os.listdir(tmp_path) == ["b.txt"]
