"""`python -m bert_tf.run_pretraining` as a user runs it: every mistake is one line, nothing lost.

Each case asserts exit 1, no traceback, one error line naming the flag or file, and that files
which existed before the run are byte-identical after it. Mistakes run in this process
(`call_entry_point`); good runs and the console test run in a new interpreter.
"""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from absl import flags

from bert_tf import cli
from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.configs import BertConfig
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.options import OptionError
from bert_tf.training.options import PretrainingOptions, check_pretraining_options
from tests.entry_points import assert_user_error, call_entry_point, run_entry_point, snapshot
from tests.integration.test_run_pretraining import PREDICTIONS, SEQ, write_config, write_records

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CORPUS = os.path.join(ROOT, "bert_tf", "data", "corpus")


def _run(*flags):
    return run_entry_point("bert_tf.run_pretraining", *flags, timeout=300)


def _call(*flags):
    return call_entry_point("bert_tf.run_pretraining", *flags)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    return {"bert_config_file": write_config(folder / "bert_config.json"),
            "input_file": write_records(folder / "train.tfrecord"),
            "max_seq_length": SEQ, "max_predictions_per_seq": PREDICTIONS,
            "train_batch_size": 8, "num_train_steps": 4, "num_warmup_steps": 1,
            "steps_per_loop": 2, "save_checkpoints_steps": 2, "do_eval": False}


def _flags(inputs, **overrides):
    return [f"--{k}={v}" for k, v in {**inputs, **overrides}.items()]


@pytest.mark.parametrize("overrides, names", [
    ({"train_batch_size": 0}, ["--train_batch_size=0"]),  # refused by the flag's bound
    ({"max_predictions_per_seq": SEQ + 1}, ["--max_predictions_per_seq", "--max_seq_length"]),
    ({"input_file": "/nonexistent/shard-*"}, ["/nonexistent/shard-*"]),
])
def test_bad_flag_is_one_line_before_any_work(tmp_path, inputs, overrides, names):
    output_dir = tmp_path / "out"
    result = _call(*_flags(inputs, output_dir=output_dir, **overrides))
    assert_user_error(result, *names)
    assert not output_dir.exists() or not os.listdir(output_dir)


def test_a_malformed_tf_config_is_one_line_before_any_work(tmp_path, inputs, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1"]}')  # unclosed
    output_dir = tmp_path / "out"
    result = _call(*_flags(inputs, output_dir=output_dir,
                           distribution_strategy="multi_worker_mirrored"))
    assert_user_error(result, "--distribution_strategy=multi_worker_mirrored: TF_CONFIG must be "
                              "JSON like")
    assert not output_dir.exists() or not os.listdir(output_dir)


@pytest.mark.parametrize("overrides, names", [
    ({"train_batch_size": -8}, ["--train_batch_size=-8"]),
    ({"num_train_steps": 0}, ["--num_train_steps=0"]),
    ({"save_checkpoints_steps": 0}, ["--save_checkpoints_steps=0"]),
    ({"gradient_accumulation_steps": 0}, ["--gradient_accumulation_steps=0"]),
    ({"steps_per_loop": 0}, ["--steps_per_loop=0"]),
    ({"learning_rate": -1e-3}, ["--learning_rate=-0.001"]),
    ({"learning_rate": 0}, ["--learning_rate=0"]),
    ({"num_warmup_steps": 10}, ["--num_warmup_steps=10"]),
    ({"gradient_accumulation_steps": 3}, ["--train_batch_size", "3"]),
    ({"input_format": "text"}, ["--vocab_file"]),
    ({"dtype": "float8"}, ["--dtype"]),
])
def test_every_bad_option_is_named_by_the_flags_or_the_option_check(inputs, overrides, names):
    """The same bounds hold for flags (absl refuses them) and for options built in code."""
    flag_values = flags.FlagValues()
    cli.define_flags(PretrainingOptions, flag_values)
    argv = ["run_pretraining"] + _flags(inputs, output_dir="out", **overrides)
    try:
        flag_values(argv)
    except flags.IllegalFlagValueError as error:
        message = str(error)
    else:
        with pytest.raises(OptionError) as caught:
            check_pretraining_options(cli.options_from_flags(PretrainingOptions, flag_values))
        message = str(caught.value)
    assert "\n" not in message
    for name in names:
        assert name in message, message
    if "dtype" not in overrides:  # an enum has no value to give a dataclass
        with pytest.raises(OptionError):
            fields = {**inputs, "output_dir": "out", **overrides}
            check_pretraining_options(PretrainingOptions(**fields))


@pytest.mark.parametrize("key, value, message", [
    ("hidden_dropout_prob", "0.1", "hidden_dropout_prob"),
    ("layer_norm_eps", -1, "layer_norm_eps"),
    ("num_attention_heads", 3, "num_attention_heads"),
])
def test_bad_config_value_names_file_and_key(tmp_path, inputs, key, value, message):
    config = write_config(tmp_path / "bad_config.json", **{key: value})
    result = _call(*_flags(inputs, bert_config_file=config, output_dir=tmp_path / "out"))
    assert_user_error(result, "bad_config.json", message)


def test_vocab_larger_than_the_config_is_refused(tmp_path, inputs):
    result = _call(*_flags(inputs, vocab_file=os.path.join(CORPUS, "vocab.txt"),
                                    output_dir=tmp_path / "out"))
    assert_user_error(result, "--vocab_file", "30522 tokens", "vocab_size=60")


def test_missing_vocab_is_found_before_training(tmp_path, inputs):
    result = _call(*_flags(inputs, vocab_file=tmp_path / "no_vocab.txt",
                                    output_dir=tmp_path / "out"))
    assert_user_error(result, "no_vocab.txt")
    assert not (tmp_path / "out" / "ckpt-2.index").exists()


def test_an_existing_model_directory_is_not_overwritten(tmp_path, inputs):
    model_dir = tmp_path / "converted_model"
    model_dir.mkdir()
    (model_dir / "bert_config.json").write_text(json.dumps({"vocab_size": 60}))
    (model_dir / "model.ckpt.index").write_bytes(b"\x00weights")
    (model_dir / "vocab.txt").write_text("[PAD]\n")
    before = snapshot(model_dir)
    result = _call(*_flags(inputs, output_dir=model_dir))
    assert_user_error(result, f"--output_dir={model_dir}", "not empty")
    assert snapshot(model_dir) == before


@pytest.mark.slow
def test_a_run_that_failed_before_its_first_checkpoint_leaves_the_folder_free(tmp_path, inputs):
    """The new user's path: a wrong --init_checkpoint fails in one line; the corrected command
    into the same --output_dir then trains there (the failed run saved nothing to protect)."""
    config = BertConfig.from_json_file(inputs["bert_config_file"])
    bigger = dataclasses.replace(config, hidden_size=24)
    write_model_dir(str(tmp_path / "bigger_model"), bigger, encoder=BertEncoder(bigger))
    # A bare checkpoint: with its bert_config.json beside it, the other size is refused before
    # the folder is claimed (test_two_phases.py); without, only the restore finds it.
    os.remove(tmp_path / "bigger_model" / "bert_config.json")
    output_dir = tmp_path / "out"
    run = _flags(inputs, output_dir=output_dir, num_train_steps=2)
    wrong = _call(*run, f"--init_checkpoint={tmp_path / 'bigger_model'}")
    assert_user_error(wrong, "init_checkpoint", "does not match the model")
    assert not list(output_dir.glob("ckpt-*"))
    corrected = _run(*run)
    assert corrected.returncode == 0, corrected.stderr[-3000:]
    assert f"{output_dir} holds the settings of a run that saved nothing" in corrected.stderr
    assert (output_dir / "ckpt-2.index").exists()
    assert "--init_checkpoint" not in (output_dir / "pretraining_flags.txt").read_text()


@pytest.fixture(scope="module")
def finished_run(inputs, tmp_path_factory):
    """`(output_dir, CompletedProcess)` of one 4-step run: the run the rerun test reruns and
    the init checkpoint of the wrong size (one run for both; either order passes: the
    rerun test only resumes the finished run, which keeps its size)."""
    output_dir = tmp_path_factory.mktemp("finished") / "run"
    return output_dir, _run(*_flags(inputs, output_dir=output_dir))


@pytest.mark.slow
def test_init_checkpoint_of_another_size_and_a_missing_tpu_are_one_line(tmp_path, inputs,
                                                                        finished_run):
    small, first = finished_run
    assert first.returncode == 0, first.stderr[-3000:]
    bigger = write_config(tmp_path / "bigger.json", hidden_size=24)
    result = _call(*_flags(inputs, output_dir=tmp_path / "big", bert_config_file=bigger,
                                    init_checkpoint=small))
    assert_user_error(result, "init_checkpoint", "does not match the model")
    assert len(result.stderr.strip().split("\n")) < 5, result.stderr[-3000:]
    tpu = _call(*_flags(inputs, output_dir=tmp_path / "tpu",
                                 distribution_strategy="tpu"))
    assert_user_error(tpu, "--distribution_strategy=tpu: cannot reach TPU 'local'")


@pytest.mark.slow
def test_rerun_with_other_settings_touches_nothing_and_same_settings_resume(tmp_path, inputs,
                                                                           finished_run):
    output_dir, first = finished_run
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    assert "step 4/4" in first.stderr and "I1" not in first.stderr  # no absl prefix on console
    assert "step 4/4" in (output_dir / "log.txt").read_text()
    before = snapshot(output_dir)
    changed = _call(*_flags(inputs, output_dir=output_dir, learning_rate=5e-4))
    assert_user_error(changed, "--learning_rate", "pretraining_flags.txt")
    assert snapshot(output_dir) == before
    longer_eval = _run(*_flags(inputs, output_dir=output_dir, steps_per_loop=1))
    assert longer_eval.returncode == 0, longer_eval.stderr[-3000:]


@pytest.mark.subprocess
@pytest.mark.parametrize("level", [None, "2"])
def test_console_is_clean_whatever_tf_cpp_min_log_level_says(tmp_path, inputs, level):
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    command = [sys.executable, "-m", "bert_tf.run_pretraining",
               *_flags(inputs, output_dir=tmp_path / "out", input_file="/nonexistent/*")]
    # After the strategy (and its devices) is built: all of TensorFlow's start-up is behind.
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 1
    assert result.stderr.strip().split("\n") == [line for line in result.stderr.strip().split("\n")
                                                 if "run_pretraining: error:" in line]
