"""The fine-tuning driver's checks: model directories without a head, schedules, label lists."""

import os

import pytest

from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.configs import BertConfig
from bert_tf.models import BertClassifier
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.tasks import finetuning
from bert_tf.tasks.adapters import classifier_adapter
from bert_tf.tasks.glue import glue_task

CONFIG = BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=16)


def test_model_dir_without_a_head_is_a_clear_error(tmp_path):
    write_model_dir(str(tmp_path), CONFIG, encoder=BertEncoder(CONFIG))
    adapter = classifier_adapter(glue_task("rte"), preprocessor=None)
    with pytest.raises(ValueError, match="holds no fine-tuned classifier head"):
        finetuning.load_finetuned(str(tmp_path), adapter)


def test_label_names_must_match_the_fine_tuned_head(tmp_path):
    model = BertClassifier(BertEncoder(CONFIG), num_classes=2)
    write_model_dir(str(tmp_path), CONFIG, info={"task": "classifier", "label_names": ["0", "1"]},
                    **model.checkpoint_items())
    with pytest.raises(ValueError, match=r"fine-tuned with labels \['0', '1'\]"):
        finetuning.load_finetuned(str(tmp_path), classifier_adapter(glue_task("rte"), None))
    restored = finetuning.load_finetuned(str(tmp_path), classifier_adapter(glue_task("mrpc"), None))
    assert restored.num_classes == 2


def test_schedule_epochs_and_warmup_inputs():
    adapter = finetuning.TaskAdapter(info={}, build_model=None, loss_fn=None,
                                     num_train_examples=100)
    config = finetuning.FinetuneConfig(output_dir="x", train_batch_size=32, num_train_epochs=2.5)
    total, ends = finetuning._schedule(config, adapter)
    assert (total, ends) == (7, [3, 6, 7])  # google-research: int(examples / batch * epochs)
    with pytest.raises(ValueError, match="make no step"):
        finetuning._schedule(finetuning.FinetuneConfig(output_dir="x", train_batch_size=200,
                                                       num_train_epochs=1),
                             adapter)


def test_missing_vocab_is_named(tmp_path):
    config = finetuning.FinetuneConfig(output_dir="x", bert_config_file="c.json",
                                       vocab_file=os.path.join(tmp_path, "vocab.txt"))
    with pytest.raises(FileNotFoundError, match="vocab.txt"):
        config.vocab()
