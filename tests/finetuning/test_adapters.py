"""Each task adapter end to end through `run_finetuning` (shared loop) on a tiny model:
SWAG multiple choice, SQuAD v2.0 spans, CoNLL tagging. Real vocab, crafted data."""

import json
import os

import numpy as np
import pytest

from bert_tf.checkpoints.model_dir import read_model_info
from bert_tf.finetuning import conll, squad_features, squad_reader, swag
from bert_tf.finetuning.adapters import _tagging_loss, choice_adapter, squad_adapter, tagger_adapter
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FinetuningOptions
from bert_tf.finetuning.table_reader import DataError
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

SWAG_HEADER = ("video-id,fold-ind,startphrase,sent1,sent2,gold-source,"
               "ending0,ending1,ending2,ending3,label\n")


def _config(model_dir, output_dir, **overrides):
    settings = dict(output_dir=str(output_dir), model_dir=model_dir, max_seq_length=32,
                    train_batch_size=4, eval_batch_size=4, learning_rate=1e-3,
                    num_train_epochs=1, steps_per_loop=2)
    settings.update(overrides)
    return FinetuningOptions(**settings)


def test_swag_reader_and_multiple_choice_run(tiny_model_dir, tmp_path):
    rows = "".join(f'v,{i},x,Someone opens the door.,He,gold,walks in.,flies away.,'
                   f'"sings, loudly.",sleeps.,{i % 4}\n' for i in range(8))
    (tmp_path / "train.csv").write_text(SWAG_HEADER + rows)
    examples = swag.read_swag(str(tmp_path / "train.csv"))
    assert examples.choices[0][2] == "He sings, loudly."
    preprocessor = BertPreprocessor(os.path.join(tiny_model_dir, "vocab.txt"), seq_length=32)
    inputs, labels = next(iter(swag.make_dataset(examples, preprocessor, batch_size=2)))
    assert inputs["input_word_ids"].shape == (2, 4, 32) and labels.numpy().tolist() == [0, 1]
    adapter = choice_adapter(preprocessor, train=examples, dev=examples, batch_size=4)
    result = run_finetuning(adapter, _config(tiny_model_dir, tmp_path / "out"))
    assert [entry["step"] for entry in result["history"]] == [2]
    assert 0.0 <= result["eval"]["accuracy"] <= 1.0
    assert read_model_info(str(tmp_path / "out" / "model"))["num_choices"] == 4
    (tmp_path / "bad.csv").write_text(SWAG_HEADER + "v,0,x,a,b,g,c,d,e,f,4\n")
    with pytest.raises(DataError, match="bad.csv:2: label '4' is not one of 0..3"):
        swag.read_swag(str(tmp_path / "bad.csv"))


def test_squad_v2_run_writes_prediction_files(tiny_model_dir, tmp_path):
    context = "The treasure is hidden under the old oak tree near the river bank."
    data = [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": "a", "question": "Where is the treasure?", "is_impossible": False,
         "answers": [{"text": "the old oak tree", "answer_start": context.index("the old")}]},
        {"id": "b", "question": "Who owns the boat?", "is_impossible": True, "answers": []},
    ]}]}]
    tokenizer = BertTokenizer(os.path.join(tiny_model_dir, "vocab.txt"))
    train_examples, _ = squad_reader.parse_squad_examples(data * 4, True, True)
    train_features = squad_features.convert_examples_to_features(
        train_examples, tokenizer, max_seq_length=32, doc_stride=8, is_training=True)
    eval_examples, _ = squad_reader.parse_squad_examples(data, False, True)
    eval_set = (eval_examples, squad_features.convert_examples_to_features(
        eval_examples, tokenizer, max_seq_length=32, doc_stride=8), data)
    adapter = squad_adapter(train_features, eval_set, eval_set, version_2=True, batch_size=4)
    result = run_finetuning(adapter, _config(tiny_model_dir, tmp_path / "out"), do_predict=True)
    assert {"exact", "f1", "HasAns_exact", "NoAns_exact", "best_f1"} <= set(result["eval"])
    predictions = json.loads((tmp_path / "out" / "predictions.json").read_text())
    assert set(predictions) == {"a", "b"}
    null_odds = json.loads((tmp_path / "out" / "null_odds.json").read_text())
    assert set(null_odds) == {"a", "b"} and all(np.isfinite(list(null_odds.values())))


@pytest.mark.parametrize("strategy", ["one_device", "mirrored"])
def test_tagging_run_writes_conlleval_predictions(tiny_model_dir, tmp_path, strategy):
    (tmp_path / "train.txt").write_text("John B-PER\nlives O\nin O\nParis B-LOC\n\n" * 4)
    sentences = conll.read_conll(str(tmp_path / "train.txt"))
    names = conll.label_names_of(sentences)
    tokenizer = BertTokenizer(os.path.join(tiny_model_dir, "vocab.txt"))
    pair = (sentences, conll.convert_sentences_to_features(sentences, tokenizer, names, 32))
    adapter = tagger_adapter(names, train=pair, dev=pair, test=pair, batch_size=4)
    config = _config(tiny_model_dir, tmp_path / "out", distribution_strategy=strategy)
    result = run_finetuning(adapter, config, do_predict=True)  # mirrored: 2 logical CPUs
    assert result["eval"]["phrases"] == 8 and result["eval"]["tokens"] == 16
    lines = (tmp_path / "out" / "test_predictions.txt").read_text().splitlines()
    assert lines[0].split()[:2] == ["John", "B-PER"] and lines[4] == ""
    assert read_model_info(str(tmp_path / "out" / "model"))["label_names"] == list(names)


def test_tagging_loss_weighs_every_labelled_token_alike():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 6, 4)).astype(np.float32)
    labels = np.array([[1, conll.IGNORE, 2, conll.IGNORE, conll.IGNORE, conll.IGNORE],
                       [0, 3, 3, 1, 2, conll.IGNORE],
                       [conll.IGNORE] * 6], np.int32)  # sentences of 2, 5 and 0 labelled tokens
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_losses = [-log_softmax[b, s, labels[b, s]] for b, s in zip(*np.nonzero(labels >= 0))]
    loss, metrics = _tagging_loss(3)({"label_ids": labels}, logits)
    np.testing.assert_allclose(float(loss), np.mean(token_losses), rtol=1e-5)
    assert float(metrics["token_accuracy"][1]) == 7
    half, _ = _tagging_loss(6)({"label_ids": labels}, logits)  # one of two replicas
    np.testing.assert_allclose(float(half), np.mean(token_losses) / 2, rtol=1e-5)
