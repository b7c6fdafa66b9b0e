"""The real `run_squad` entry point on tiny SQuAD v1.1 and v2.0 files and a tiny model: train,
evaluate with the official metric, write the prediction files; bad JSON refused naming the
file and the question, a sequence too short for the questions refused naming the flags."""

import json

import pytest

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot

CONTEXT = "The treasure is hidden under the old oak tree near the river bank."


def _squad(path, version_2):
    answer = {"text": "the old oak tree", "answer_start": CONTEXT.index("the old")}
    questions = [{"id": f"a{i}", "question": "Where is the treasure?", "answers": [answer]}
                 for i in range(6)]
    if version_2:
        questions += [{"id": f"b{i}", "question": "Who owns the boat?", "is_impossible": True,
                       "answers": []} for i in range(2)]
    path.write_text(json.dumps({"version": "2.0" if version_2 else "1.1", "data": [
        {"title": "t", "paragraphs": [{"context": CONTEXT, "qas": questions}]}]}))
    return path


def _args(data, model_dir, output_dir, *extra):
    return (f"--train_file={data}", f"--predict_file={data}", f"--model_dir={model_dir}",
            f"--output_dir={output_dir}", "--max_seq_length=32", "--max_query_length=8",
            "--doc_stride=8", "--train_batch_size=4", "--eval_batch_size=8",
            "--learning_rate=1e-3", "--num_train_epochs=1", "--steps_per_loop=2", *extra)


@pytest.mark.subprocess
@pytest.mark.parametrize("version_2", [False, True], ids=["v1.1", "v2.0"])
def test_train_eval_predict(tiny_model_dir, tmp_path, version_2):
    data = _squad(tmp_path / "squad.json", version_2)
    output_dir = tmp_path / "out"
    extra = ["--version_2_with_negative"] if version_2 else []
    result = run_entry_point("bert_tf.run_squad", *_args(data, tiny_model_dir, output_dir,
                                                         "--do_train", "--do_eval", "--do_predict",
                                                         *extra))
    assert result.returncode == 0, result.stderr[-3000:]
    scores = json.loads((output_dir / "eval_results.json").read_text())
    exact = scores["exact"] if version_2 else scores["exact_match"]  # the official scripts' keys
    assert 0.0 <= exact <= scores["f1"] <= 100.0
    assert ("HasAns_exact" in scores) == version_2
    predictions = json.loads((output_dir / "predictions.json").read_text())
    assert len(predictions) == (8 if version_2 else 6)
    null_odds = json.loads((output_dir / "null_odds.json").read_text())
    assert (len(null_odds) == 8) if version_2 else null_odds == {}
    info = json.loads((output_dir / "model" / "model_info.json").read_text())
    assert info["task_name"] == ("squad_v2" if version_2 else "squad_v1.1")


def test_bad_json_and_short_sequences_are_named(tiny_model_dir, tmp_path):
    data = _squad(tmp_path / "squad.json", False)
    broken = json.loads(data.read_text())
    broken["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]["answer_start"] = "17"
    data.write_text(json.dumps(broken))
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_squad", *_args(data, tiny_model_dir, tmp_path / "out",
                                                    "--do_train"))
    assert_user_error(result, f"{data}: data[0].paragraphs[0].qas[1].answers[0]: "
                      "'answer_start' must be of type int, found str")
    result = call_entry_point("bert_tf.run_squad", *_args(data, tiny_model_dir, tmp_path / "out",
                                                   "--do_train", "--max_query_length=29"))
    assert_user_error(result, "--max_seq_length=32: leaves no room for context "
                      "after --max_query_length=29")
    assert snapshot(tmp_path, tiny_model_dir) == before
    assert not (tmp_path / "out").exists()
