"""The real `run_multiple_choice` entry point on tiny SWAG files and a tiny model: train, eval,
predict; a bad label and a missing file refused naming them, nothing written."""

import json

import pytest

from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot

HEADER = ("video-id,fold-ind,startphrase,sent1,sent2,gold-source,"
          "ending0,ending1,ending2,ending3,label\n")


def _swag(folder, rows=8):
    folder.mkdir(exist_ok=True)
    lines = "".join(f'v,{i},x,Someone opens the door.,He,gold,walks in.,flies away.,'
                    f'"sings, loudly.",sleeps.,{i % 4}\n' for i in range(rows))
    for name in ("train.csv", "val.csv"):
        (folder / name).write_text(HEADER + lines)
    (folder / "test.csv").write_text(HEADER.replace(",label", "") + "v,0,x,A man,He,g,a,b,c,d\n")


def _args(data_dir, model_dir, output_dir, *extra):
    return (f"--data_dir={data_dir}", f"--model_dir={model_dir}", f"--output_dir={output_dir}",
            "--max_seq_length=16", "--train_batch_size=4", "--eval_batch_size=8",
            "--num_train_epochs=1", "--steps_per_loop=2", *extra)


@pytest.mark.subprocess
def test_train_eval_predict(tiny_model_dir, tmp_path):
    _swag(tmp_path / "swag")
    output_dir = tmp_path / "out"
    result = run_entry_point("bert_tf.run_multiple_choice", *_args(
        tmp_path / "swag", tiny_model_dir, output_dir, "--do_train", "--do_eval", "--do_predict"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert 0.0 <= json.loads((output_dir / "eval_results.json").read_text())["accuracy"] <= 1.0
    predictions = (output_dir / "test_predictions.csv").read_text().split("\n")
    assert predictions[0] == "id,pred" and predictions[1].split(",")[1] in "0123"
    assert json.loads((output_dir / "model" / "model_info.json").read_text())["num_choices"] == 4


def test_bad_label_and_missing_file_are_named(tiny_model_dir, tmp_path):
    _swag(tmp_path / "swag")
    train = tmp_path / "swag" / "train.csv"
    train.write_text(train.read_text() + "v,9,x,A man,He,g,a,b,c,d,7\n")
    before = snapshot(tmp_path, tiny_model_dir)
    result = call_entry_point("bert_tf.run_multiple_choice", *_args(
        tmp_path / "swag", tiny_model_dir, tmp_path / "out", "--do_train"))
    assert_user_error(result, f"{train}:10: label '7' is not one of 0..3")
    result = call_entry_point("bert_tf.run_multiple_choice", *_args(
        tmp_path / "swag", tiny_model_dir, tmp_path / "out", "--do_train", "--do_eval",
        f"--dev_file={tmp_path / 'none.csv'}"))
    assert_user_error(result, f"--dev_file={tmp_path / 'none.csv'}: no "
                      "such file")
    assert snapshot(tmp_path, tiny_model_dir) == before
    assert not (tmp_path / "out").exists()
