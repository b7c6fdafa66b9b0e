"""predict_corpus's bad inputs: one line naming what and where, and nothing left written."""

import os

import pytest

from bert_tf.corpus_inference.corpus_predictions import predict_corpus
from bert_tf.corpus_inference.predictor import PredictSettings
from bert_tf.corpus_inference.readers import LineReader
from bert_tf.data.document_reader import InputError
from bert_tf.file_io import OutputExistsError
from bert_tf.keras_tasks import TaskInputError

pytest.importorskip("apache_beam", reason="the pipeline runs on Beam (the beam extra)")


def test_undecodable_line_found_by_a_worker_is_one_line_and_leaves_nothing(tiny_model_dir, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"Fine.\nAlso fine.\n")
    (tmp_path / "b.txt").write_bytes(b"Fine.\nBad \xff byte.\n")
    with pytest.raises(InputError) as error:
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "out"),
                       PredictSettings(model=tiny_model_dir), reader=LineReader(undecodable="fail"))
    assert str(error.value).startswith(f"{tmp_path}/b.txt:2: the line is not UTF-8")
    assert "\n" not in str(error.value)
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_a_head_the_model_lacks_is_refused_before_any_work(tiny_model_dir, tmp_path):
    (tmp_path / "a.txt").write_text("Fine.\n")
    with pytest.raises(TaskInputError, match=f"--model={tiny_model_dir} holds no fine-tuned "
                                             "token_classifier head"):
        predict_corpus(f"{tmp_path}/a.txt", str(tmp_path / "out"),
                       PredictSettings(model=tiny_model_dir, head="token_classifier"))
    assert os.listdir(tmp_path) == ["a.txt"]


def test_output_holding_results_and_missing_input_are_refused(tiny_model_dir, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "part-00000-of-00001.jsonl").write_text("{}\n")
    with pytest.raises(OutputExistsError, match="--output=.*/out: the output folder already exists"):
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "out"), PredictSettings(model=tiny_model_dir))
    with pytest.raises(InputError, match="matches no file"):
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "new"), PredictSettings(model=tiny_model_dir))
    assert sorted(os.listdir(tmp_path)) == ["out"]
