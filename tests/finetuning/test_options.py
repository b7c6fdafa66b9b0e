"""`FinetuningOptions` checks: bounds, model sources, an output folder that would overwrite
something, and a sequence length the model cannot hold; all before any data is read."""

import os

import pytest

from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.configs import BertConfig
from bert_tf.errors import UserError
from bert_tf.finetuning.options import FinetuningOptions, check_finetuning_options
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.options import OptionError

CONFIG = BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=16, max_position_embeddings=64)


@pytest.fixture
def model_dir(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]) + "\n")
    path = tmp_path / "model"
    write_model_dir(str(path), CONFIG, str(vocab), encoder=BertEncoder(CONFIG))
    return str(path)


def _check(model_dir, tmp_path, modes=(True, False, False), **overrides):
    settings = dict(output_dir=str(tmp_path / "out"), model_dir=model_dir, max_seq_length=32)
    settings.update(overrides)
    check_finetuning_options(FinetuningOptions(**settings), *modes)


@pytest.mark.parametrize("name, value, reason", [
    ("train_batch_size", 0, "must be at least 1"),
    ("eval_batch_size", -1, "must be at least 1"),
    ("learning_rate", 0.0, "must be greater than 0"),
    ("learning_rate", -1e-5, "must be at least 0.0"),
    ("num_train_epochs", 0.0, "must be greater than 0"),
    ("warmup_proportion", 1.5, "must be at most 1.0"),
    ("save_checkpoints_steps", 0, "must be at least 1"),
    ("steps_per_loop", 0, "must be at least 1"),
    ("collective_timeout_seconds", 0, "must be at least 1"),
    ("max_seq_length", 2, "must be at least 3"),
    ("max_seq_length", 65, "must be at most the model's max_position_embeddings=64"),
    ("dtype", "float16", "choose one of"),
    ("padding", "widest", "choose one of"),
])
def test_bounds_are_named_as_flags(model_dir, tmp_path, name, value, reason):
    with pytest.raises(OptionError, match=f"--{name}={value}: {reason}"):
        _check(model_dir, tmp_path, **{name: value})


def test_tpu_runs_take_fixed_padding(model_dir, tmp_path):
    with pytest.raises(OptionError, match="--padding=longest: TPUs take one static shape"):
        _check(model_dir, tmp_path, distribution_strategy="tpu")
    _check(model_dir, tmp_path, distribution_strategy="tpu", padding="fixed")


def test_packed_training_is_auto_resolved_and_refused_on_tpus(model_dir, tmp_path):
    assert FinetuningOptions(output_dir="o", model_dir=model_dir).packs_training
    assert not FinetuningOptions(output_dir="o", model_dir=model_dir,
                                 distribution_strategy="tpu", padding="fixed").packs_training
    assert not FinetuningOptions(output_dir="o", model_dir=model_dir,
                                 packed_training="false").packs_training
    with pytest.raises(OptionError, match="--packed_training=true: TPUs take one static shape"):
        _check(model_dir, tmp_path, distribution_strategy="tpu", padding="fixed",
               packed_training="true")


def test_output_dir_is_required(model_dir, tmp_path):
    with pytest.raises(OptionError, match="--output_dir is required"):
        _check(model_dir, tmp_path, output_dir=None)


def test_a_mode_is_required(model_dir, tmp_path):
    with pytest.raises(UserError, match="Nothing to do: give at least one of --do_train, "
                                        "--do_eval, --do_predict"):
        _check(model_dir, tmp_path, modes=(False, False, False))


def test_eval_only_needs_a_fine_tuned_model(model_dir, tmp_path):
    with pytest.raises(UserError, match="without --do_train need a fine-tuned model"):
        _check(model_dir, tmp_path, modes=(False, True, False))
    (tmp_path / "out" / "model").mkdir(parents=True)
    (tmp_path / "out" / "flags.txt").write_text("")
    _check(model_dir, tmp_path, modes=(False, True, False))


def test_model_sources_are_named(model_dir, tmp_path):
    with pytest.raises(OptionError, match="--model_dir=.*nowhere: no such directory"):
        _check(str(tmp_path / "nowhere"), tmp_path)
    os.remove(os.path.join(model_dir, "vocab.txt"))
    with pytest.raises(OptionError, match="has no vocab.txt"):
        _check(model_dir, tmp_path)
    with pytest.raises(OptionError, match="--bert_config_file is missing: give --model_dir"):
        _check(None, tmp_path)
    config_file = os.path.join(model_dir, "bert_config.json")
    with pytest.raises(OptionError, match=r"--vocab_file=.*vocab.txt: no such file"):
        _check(None, tmp_path, bert_config_file=config_file,
               vocab_file=os.path.join(model_dir, "vocab.txt"))
    with pytest.raises(OptionError, match="--init_checkpoint=.*nope: neither a model directory"):
        _check(None, tmp_path, bert_config_file=config_file, vocab_file=config_file,
               init_checkpoint=str(tmp_path / "nope"))


def test_output_dir_never_overwrites_the_model_or_other_files(model_dir, tmp_path):
    with pytest.raises(OptionError, match="is \\(inside\\) --model_dir="):
        _check(model_dir, tmp_path, output_dir=model_dir)
    with pytest.raises(OptionError, match="is \\(inside\\) --model_dir="):
        _check(model_dir, tmp_path, output_dir=os.path.join(model_dir, "sub"))
    with pytest.raises(OptionError, match="training would overwrite --model_dir"):
        _check(model_dir, tmp_path, output_dir=os.path.dirname(model_dir))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(OptionError, match=r"holds files of something other than a fine-tuning "
                                          r"run \(notes.txt\)"):
        _check(model_dir, tmp_path, output_dir=str(tmp_path / "other"))
    (tmp_path / "other" / "flags.txt").write_text("")  # an earlier run's folder resumes
    _check(model_dir, tmp_path, output_dir=str(tmp_path / "other"))
