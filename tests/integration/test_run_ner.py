"""The real `run_ner` entry point on tiny CoNLL files and a tiny model: train, eval, predict in
one run; CoNLL column shifts and invalid UTF-8 refused naming file:line, nothing written."""

import json

import pytest

from bert_tf.checkpoints.model_dir import read_model_info
from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot

SENTENCE = "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\ncall NN I-NP O\n\n"


def _args(data_dir, model_dir, output_dir, *extra):
    return (f"--data_dir={data_dir}", f"--model_dir={model_dir}", f"--output_dir={output_dir}",
            "--max_seq_length=16", "--train_batch_size=4", "--eval_batch_size=8",
            "--learning_rate=1e-3", "--num_train_epochs=1", "--steps_per_loop=2", *extra)


@pytest.mark.subprocess
def test_train_eval_predict(tiny_model_dir, tmp_path):
    for name in ("train.txt", "dev.txt", "test.txt"):
        (tmp_path / name).write_text("-DOCSTART- -X- -X- O\n\n" + SENTENCE * 8)
    output_dir = tmp_path / "out"
    result = run_entry_point("bert_tf.run_ner", *_args(tmp_path, tiny_model_dir, output_dir,
                                                 "--do_train", "--do_eval", "--do_predict"))
    assert result.returncode == 0, result.stderr[-3000:]
    history = json.loads((output_dir / "eval_history.json").read_text())
    assert [entry["step"] for entry in history] == [2]
    assert history[0]["metrics"]["phrases"] == 16  # 2 entities in each of 8 sentences
    assert "eval: {" in result.stdout and "test_predictions.txt" in result.stdout
    lines = (output_dir / "test_predictions.txt").read_text().split("\n")
    assert lines[0].split()[:2] == ["EU", "B-ORG"] and lines[4] == ""
    info = read_model_info(str(output_dir / "model"))
    assert info["head"] == "token_classifier" and info["label_names"][0] == "O"
    assert "--do_train" in (output_dir / "flags.txt").read_text()


def test_a_line_with_other_columns_names_file_and_line(tiny_model_dir, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(SENTENCE * 2 + "call NN I-NP\n")
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_ner", *_args(tmp_path, tiny_model_dir, tmp_path / "out",
                                                  "--do_train"))
    assert_user_error(result, f"{train}:11: 3 fields, but the first token line has 4")
    assert snapshot(tmp_path, tiny_model_dir) == before
    assert not (tmp_path / "out").exists()


def test_invalid_utf8_names_file_and_line(tiny_model_dir, tmp_path):
    train = tmp_path / "train.txt"
    train.write_bytes(SENTENCE.encode() + b"Caf\xe9 NNP B-NP B-LOC\n")
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_ner", *_args(tmp_path, tiny_model_dir, tmp_path / "out",
                                                 "--do_train", "--dev_fraction=1.5"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "flag --dev_fraction=1.5: 1.5 is not a number in the range [0.0, 1.0]" in \
        result.stderr
    result = call_entry_point("bert_tf.run_ner", *_args(tmp_path, tiny_model_dir, tmp_path / "out",
                                                 "--do_train"))
    assert_user_error(result, f"{train}:6: not valid UTF-8 (byte 0xe9 at column 4)")
    assert snapshot(tmp_path, tiny_model_dir) == before
