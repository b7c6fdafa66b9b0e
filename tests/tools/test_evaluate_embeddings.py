"""tools/evaluate_embeddings.py: a model scored on STS and retrieval files, and its refusals."""

import json

import pytest

from bert_tf.evaluation import RetrievalEvaluator, STSEvaluator
from bert_tf.evaluation.data_files import read_retrieval_files, read_sts_file
from bert_tf.keras_tasks import SentenceEncoder
from tests.entry_points import assert_user_error, call_entry_point
from tests.evaluation.test_evaluators import FIRST, GOLD, SECOND, _write
from tests.tools.conftest import run_tool

TOOL = "tools/evaluate_embeddings.py"


@pytest.fixture
def files(tmp_path):
    """`{flag: path}` of an STS file and a retrieval set."""
    return {
        "sts_file": _write(tmp_path / "sts.jsonl", [
            {"sentence1": a, "sentence2": b, "score": s} for a, b, s in zip(FIRST, SECOND, GOLD)]),
        "queries": _write(tmp_path / "queries.jsonl", [{"_id": f"q{i}", "text": text}
                                                       for i, text in enumerate(FIRST)]),
        "corpus": _write(tmp_path / "corpus.jsonl", [{"_id": f"d{i}", "text": text}
                                                     for i, text in enumerate(SECOND)]),
        "qrels": _write(tmp_path / "qrels.tsv", [("query-id", "corpus-id", "score")]
                        + [(f"q{i}", f"d{i}", 1) for i in range(len(FIRST))], jsonl=False)}


@pytest.mark.subprocess
def test_scores_are_the_evaluators(tiny_model_dir, files, tmp_path):
    output = tmp_path / "scores.json"
    result = run_tool("evaluate_embeddings", f"--model={tiny_model_dir}", "--batch_size=2",
                      *[f"--{flag}={path}" for flag, path in files.items()],
                      f"--output_file={output}")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sts: spearman_cosine ") and ", pearson_cosine " in lines[0]
    assert lines[1].startswith("retrieval: ndcg@10 ") and ", recall@100 " in lines[1]
    scores = json.loads(output.read_text())
    model = SentenceEncoder.from_pretrained(tiny_model_dir)
    expected = STSEvaluator(*read_sts_file(files["sts_file"]))(model)
    expected.update(RetrievalEvaluator(read_retrieval_files(
        files["queries"], files["corpus"], files["qrels"]))(model))
    assert scores == pytest.approx(expected, abs=1e-6)


def test_bad_input_is_one_line(tiny_model_dir, files, tmp_path):
    model = f"--model={tiny_model_dir}"
    assert_user_error(call_entry_point(TOOL, model), "nothing to evaluate")
    assert_user_error(call_entry_point(TOOL, model, f"--queries={files['queries']}"),
                      "--corpus, --qrels missing")
    bad = _write(tmp_path / "bad.jsonl", [{"a": "x", "b": "y", "label": 1}])
    assert_user_error(call_entry_point(TOOL, model, f"--sts_file={bad}"),
                      "missing column(s) ['sentence1', 'sentence2', 'score']",
                      "the row has ['a', 'b', 'label']")
    (tmp_path / "taken.json").write_text("{}")
    assert_user_error(call_entry_point(TOOL, model, f"--sts_file={files['sts_file']}",
                                       f"--output_file={tmp_path / 'taken.json'}"),
                      "already exists")
