"""The fine-tuning driver's checks: model directories without a head, schedules, label lists,
the dtype policy restored after a run, and the eval history file."""

import keras
import pytest

from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.configs import BertConfig
from bert_tf.finetuning import driver, eval_history
from bert_tf.finetuning.adapters import classifier_adapter
from bert_tf.finetuning.glue import glue_task
from bert_tf.finetuning.options import FinetuningOptions
from bert_tf.finetuning.table_reader import DataError
from bert_tf.finetuning.task_adapter import TaskAdapter
from bert_tf.models import BertClassifier
from bert_tf.models.bert_encoder import BertEncoder

CONFIG = BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=16)


def test_model_dir_without_a_head_is_a_clear_error(tmp_path):
    write_model_dir(str(tmp_path), CONFIG, encoder=BertEncoder(CONFIG))
    adapter = classifier_adapter(glue_task("rte"), preprocessor=None)
    with pytest.raises(driver.FinetuningError, match="holds no fine-tuned classifier head"):
        driver.load_finetuned(str(tmp_path), adapter)


def test_label_names_must_match_the_fine_tuned_head(tmp_path):
    model = BertClassifier(BertEncoder(CONFIG), num_classes=2)
    write_model_dir(str(tmp_path), CONFIG, info={"head": "classifier", "label_names": ["0", "1"]},
                    **model.checkpoint_items())
    with pytest.raises(driver.FinetuningError, match=r"fine-tuned with labels \['0', '1'\]"):
        driver.load_finetuned(str(tmp_path), classifier_adapter(glue_task("rte"), None))
    restored = driver.load_finetuned(str(tmp_path), classifier_adapter(glue_task("mrpc"), None))
    assert restored.num_classes == 2


def test_schedule_epochs_and_warmup_inputs():
    adapter = TaskAdapter(info={}, build_model=None, loss_fn=None, num_train_examples=100)
    options = FinetuningOptions(output_dir="x", train_batch_size=32, num_train_epochs=2.5)
    total, ends = driver._schedule(options, adapter)
    assert (total, ends) == (7, [3, 6, 7])  # google-research: int(examples / batch * epochs)
    with pytest.raises(driver.FinetuningError, match="make no step"):
        driver._schedule(FinetuningOptions(output_dir="x", train_batch_size=200,
                                               num_train_epochs=1),
                             adapter)


def test_a_failed_run_restores_the_dtype_policy(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n")
    write_model_dir(str(tmp_path / "m"), CONFIG, str(tmp_path / "vocab.txt"),
                    encoder=BertEncoder(CONFIG))
    adapter = TaskAdapter(info={"head": "classifier"}, build_model=None, loss_fn=None)
    options = FinetuningOptions(output_dir=str(tmp_path / "out"), model_dir=str(tmp_path / "m"),
                                dtype="mixed_bfloat16", max_seq_length=8)
    before = keras.mixed_precision.global_policy().name
    with pytest.raises(driver.FinetuningError, match="needs training data"):
        driver.run_finetuning(adapter, options, do_train=True, do_eval=False)
    assert keras.mixed_precision.global_policy().name == before


def test_eval_history_round_trip_and_damage_named(tmp_path):
    assert eval_history.load_history(str(tmp_path)) == []
    history = [{"epoch": 1, "step": 3, "metrics": {"f1": 0.5}},
               {"epoch": 2, "step": 6, "metrics": {"f1": 0.75}, "best": True}]
    eval_history.save_history(str(tmp_path), history)
    assert eval_history.load_history(str(tmp_path)) == history
    assert eval_history.best_metric(history, "f1") == 0.75
    assert eval_history.best_metric([{"epoch": 1, "step": 3}], "f1") == -float("inf")
    (tmp_path / eval_history.HISTORY_FILE).write_text('[{"epoch": 1,\n')
    with pytest.raises(DataError, match=r"eval_history.json:2: not valid JSON"):
        eval_history.load_history(str(tmp_path))
