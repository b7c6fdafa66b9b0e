"""`python -m bert_tf.run_pretraining` on packed records (`--max_sequences_per_pack`) under XLA.

Records of the shipped held-out corpus with up to 3 sequences per row (static shapes: what
XLA and TPUs need) train a tiny model whose loss falls; options that cannot take packed rows
are refused in one line naming the flag, before anything is written.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records.record_options import Options
from bert_tf.training.options import PretrainingOptions
from bert_tf.training.pretraining_runner import PretrainingInputError, prepare_pretraining
from tests.entry_points import assert_user_error, call_entry_point

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CORPUS = os.path.join(ROOT, "bert_tf", "data", "corpus")
VOCAB = os.path.join(CORPUS, "kjv_vocab.txt")
SEQ, PREDICTIONS = 128, 20
STEP_LINE = re.compile(r"step (\d+)/\d+ loss=([\d.]+) ")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packed_inputs")

    def records(name, max_sequences_per_pack):
        # short_seq_prob=0.5: short sequences, so that a quarter of the rows hold two.
        options = Options(vocab_file=VOCAB, dupe_factor=2, random_seed=36, max_seq_length=SEQ,
                          max_predictions_per_seq=PREDICTIONS, short_seq_prob=0.5,
                          max_sequences_per_pack=max_sequences_per_pack)
        result = cpd.create_pretraining_data(os.path.join(CORPUS, "heldout.txt.gz"),
                                             str(folder / name), options)
        return result["output_files"][0], result

    packed, result = records("packed.tfrecord", 3)
    assert result["rows"] < 0.85 * result["instances"]
    unpacked, _ = records("unpacked.tfrecord", 1)
    config = {"vocab_size": 4274, "hidden_size": 32, "num_hidden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": SEQ,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
              "initializer_range": 0.06}
    (folder / "bert_config.json").write_text(json.dumps(config))
    return {"bert_config_file": str(folder / "bert_config.json"), "input_file": packed,
            "unpacked": unpacked}


def _options(inputs, output_dir, **overrides):
    return {"bert_config_file": inputs["bert_config_file"], "input_file": inputs["input_file"],
            "output_dir": str(output_dir), "vocab_file": VOCAB, "max_seq_length": SEQ,
            "max_predictions_per_seq": PREDICTIONS, "train_batch_size": 16, "eval_batch_size": 16,
            "learning_rate": 3e-3, "num_train_steps": 120, "num_warmup_steps": 10,
            "steps_per_loop": 20, "save_checkpoints_steps": 120, "max_eval_steps": 3, **overrides}


def _flags(inputs, output_dir, **overrides):
    return [f"--{k}={v}" for k, v in _options(inputs, output_dir, **overrides).items()]


def _run(*flags):
    return subprocess.run([sys.executable, "-m", "bert_tf.run_pretraining", *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
                               "CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.subprocess
@pytest.mark.slow
def test_packed_records_train_under_xla(tmp_path, inputs):
    output_dir = tmp_path / "out"
    result = _run(*_flags(inputs, output_dir, enable_xla=True))
    assert result.returncode == 0, result.stderr[-3000:]
    log = result.stdout + result.stderr
    assert "records of several sequences per row" in log, log[-3000:]
    losses = [float(loss) for _, loss in STEP_LINE.findall(log)]
    assert len(losses) == 6, log[-3000:]
    assert losses[-1] < losses[0] - 1.0, losses  # measured 8.65 -> 6.42
    assert re.search(r"held-out at step 120: mlm_accuracy=[\d.]+ mlm_loss=[\d.]+ real_tokens=0\.9",
                     log), log[-3000:]
    assert os.path.exists(output_dir / "model.ckpt.index")


@pytest.mark.parametrize("overrides, names", [
    ({"packed_training": "true"}, ["--packed_training=true", "--max_sequences_per_pack"]),
    ({"max_seq_length": 64}, ["'input_ids' has 128 values", "--max_seq_length=64"]),
])
def test_options_that_cannot_take_packed_records_are_one_line(tmp_path, inputs, overrides, names):
    output_dir = tmp_path / "out"
    result = call_entry_point("bert_tf.run_pretraining", *_flags(inputs, output_dir, **overrides))
    assert_user_error(result, *names)
    assert not output_dir.exists() or not os.listdir(output_dir)


@pytest.mark.parametrize("overrides, name", [
    ({"left_to_right": True}, "--left_to_right"),
    ({"eval_input_file": "unpacked"}, "--eval_input_file"),
])
def test_refused_combinations_name_the_flag(tmp_path, inputs, overrides, name):
    if overrides.get("eval_input_file") == "unpacked":
        overrides = {"eval_input_file": inputs["unpacked"]}
    options = PretrainingOptions(**_options(inputs, tmp_path / "out", **overrides))
    with pytest.raises(PretrainingInputError, match=name) as caught:
        prepare_pretraining(options)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
