"""predict_corpus's bad inputs: one line naming what and where, and nothing left written;
and the model built once, by the worker."""

import os

import pytest

from bert_tf.corpus_inference.corpus_predictions import predict_corpus
from bert_tf.corpus_inference.predictor import PredictSettings
from bert_tf.corpus_inference.readers import LineReader
from bert_tf.data import beam_runner
from bert_tf.data.document_reader import InputError
from bert_tf.file_io import OutputExistsError
from bert_tf.keras_tasks import SentenceEncoder, TaskInputError, TextClassifier, TokenClassifier
from tests.tools.conftest import damaged_model_dir  # noqa: F401  (a fixture)

pytest.importorskip("apache_beam", reason="the pipeline runs on Beam (the beam extra)")


def _counted(from_pretrained, builds):
    """`from_pretrained` (a classmethod's function) that first appends `(process id, folder)`."""
    def counted(cls, folder, *args, **kwargs):
        builds.append((os.getpid(), folder))
        return from_pretrained(cls, folder, *args, **kwargs)
    return classmethod(counted)


def _count_builds(monkeypatch):
    """The list every task model built in this process from now on goes into, as
    `(process id, folder)`."""
    builds = []
    for task in (SentenceEncoder, TextClassifier, TokenClassifier):
        counted = _counted(task.from_pretrained.__func__, builds)
        monkeypatch.setattr(task, "from_pretrained", counted)
    return builds


def test_a_direct_runner_run_builds_the_model_once(tiny_model_dir, tmp_path, monkeypatch):
    builds = _count_builds(monkeypatch)
    (tmp_path / "a.txt").write_text("Fine.\nAlso fine.\n")
    stats = predict_corpus(f"{tmp_path}/a.txt", str(tmp_path / "out"),
                           PredictSettings(model=tiny_model_dir, batch_size=1))
    assert stats["lines"] == 2
    assert builds == [(os.getpid(), tiny_model_dir)]  # the worker's; the launcher builds none


def test_undecodable_line_found_by_a_worker_is_one_line_and_leaves_nothing(tiny_model_dir,
                                                                           tmp_path):
    (tmp_path / "a.txt").write_bytes(b"Fine.\nAlso fine.\n")
    (tmp_path / "b.txt").write_bytes(b"Fine.\nBad \xff byte.\n")
    with pytest.raises(InputError) as error:
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "out"),
                       PredictSettings(model=tiny_model_dir), reader=LineReader(undecodable="fail"))
    assert str(error.value).startswith(f"{tmp_path}/b.txt:2: the line is not UTF-8")
    assert "\n" not in str(error.value)
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


@pytest.mark.parametrize("folder, settings, message", [
    ("tiny_model_dir", {"head": "token_classifier"},
     "--model={} holds no fine-tuned token_classifier head (it holds an encoder only); pass "
     "--head=encoder or a model fine-tuned as a token_classifier."),
    ("tagger_dir", {"long_lines": "windows"},
     "--long_lines=windows pools a classifier's or an encoder's outputs; a token classifier tags "
     "the words of the first window only (pass --long_lines=truncate)."),
    ("tiny_model_dir", {"max_seq_length": 65},
     "max_seq_length=65 is above the model's max_position_embeddings=64; pass "
     "max_seq_length <= 64."),
    ("model_garden_dir", {"max_seq_length": 33},
     "max_seq_length=33 is above the model's max_position_embeddings=32; pass "
     "max_seq_length <= 32."),
], ids=["missing_head", "windows_on_a_tagger", "max_seq_length_too_long",
        "max_seq_length_too_long_for_model_garden"])
def test_a_wrong_head_or_length_is_refused_before_any_model_or_pipeline(request, tmp_path,
                                                                        monkeypatch, folder,
                                                                        settings, message):
    folder = request.getfixturevalue(folder)
    builds = _count_builds(monkeypatch)
    monkeypatch.setattr(beam_runner, "pipeline_options", _no_pipeline)
    (tmp_path / "a.txt").write_text("Fine.\n")
    with pytest.raises(TaskInputError) as error:
        predict_corpus(f"{tmp_path}/a.txt", str(tmp_path / "out"),
                       PredictSettings(model=folder, **settings))
    assert str(error.value) == message.format(folder)
    assert builds == []
    assert os.listdir(tmp_path) == ["a.txt"]


def _no_pipeline(*args):
    raise AssertionError(f"a pipeline was made ({args}) before the model's checks refused it")


@pytest.mark.parametrize("folder, settings, message", [
    ("damaged_model_dir", {}, "{}/model.ckpt is damaged or half-written"),
], ids=["damaged_checkpoint"])
def test_a_model_the_worker_cannot_build_is_one_line_and_leaves_nothing(request, tmp_path, folder,
                                                                        settings, message):
    folder = request.getfixturevalue(folder)
    run = tmp_path / "run"  # `damaged_model_dir` is in tmp_path too
    run.mkdir()
    (run / "a.txt").write_text("Fine.\n")
    with pytest.raises(InputError) as error:
        predict_corpus(f"{run}/a.txt", str(run / "out"), PredictSettings(model=folder, **settings))
    assert message.format(folder) in str(error.value)
    assert "\n" not in str(error.value) and "[while running" not in str(error.value)
    assert os.listdir(run) == ["a.txt"]


def test_output_holding_results_and_missing_input_are_refused(tiny_model_dir, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "part-00000-of-00001.jsonl").write_text("{}\n")
    with pytest.raises(OutputExistsError,
                       match="--output=.*/out: the output folder already exists"):
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "out"),
                       PredictSettings(model=tiny_model_dir))
    with pytest.raises(InputError, match="matches no file"):
        predict_corpus(f"{tmp_path}/*.txt", str(tmp_path / "new"),
                       PredictSettings(model=tiny_model_dir))
    assert sorted(os.listdir(tmp_path)) == ["out"]
