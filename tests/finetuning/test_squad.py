"""SQuAD reading, windowing and postprocessing on allennlp's real sample and crafted cases.

tests/testdata/squad/allennlp_squad.json is `allennlp/tests/fixtures/data/squad.json` from
the allennlp==0.9.0 wheel (Apache-2.0): two real SQuAD v1.1 paragraphs, five questions.
"""

import json
import os
import pathlib

import numpy as np
import pytest

from bert_tf.finetuning import squad_features, squad_postprocess, squad_reader
from bert_tf.finetuning.table_reader import DataError
from bert_tf.metrics import squad as squad_metrics
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

SAMPLE = pathlib.Path(__file__).parents[1] / "testdata" / "squad" / "allennlp_squad.json"


@pytest.fixture(scope="module")
def tokenizer(minilm_hf_dir):
    return BertTokenizer(os.path.join(minilm_hf_dir, "vocab.txt"))


def _span_text(example, features, window, start, end):
    spans = features.token_byte_spans[window]
    return example.context.encode()[spans[start, 0]:spans[end, 1]].decode()


def test_real_sample_parses_and_answers_align(tokenizer):
    examples, skipped, data = squad_reader.read_squad_examples(str(SAMPLE), is_training=True)
    assert (len(examples), skipped) == (5, 0)
    assert examples[4].answer_text == "an early wind tunnel"
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=384, doc_stride=128, is_training=True)
    assert len(features) == 5  # both contexts fit one window
    for window, example_index in enumerate(features.example_index):
        example = examples[example_index]
        text = _span_text(example, features, window, features.start_positions[window],
                          features.end_positions[window])
        # "Father Julius Nieuwl" is cut mid-word in the data; the token span covers the word.
        assert example.answer_text in text
        assert features.input_word_ids[window, 0] == tokenizer.cls_id
    # Gold answers kept for evaluation: question 2 has three.
    eval_examples, _ = squad_reader.parse_squad_examples(data, is_training=False)
    assert len(eval_examples[1].answers) == 3


def test_gold_logits_reproduce_the_answers(tokenizer):
    examples, _, data = squad_reader.read_squad_examples(str(SAMPLE), is_training=True)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=384, doc_stride=128, is_training=True)
    start_logits = np.zeros(features.input_word_ids.shape, np.float32)
    end_logits = np.zeros_like(start_logits)
    rows = np.arange(len(features))
    start_logits[rows, features.start_positions] = 10.0
    end_logits[rows, features.end_positions] = 10.0
    predictions, nbest, null_odds = squad_postprocess.postprocess_predictions(
        examples, features, start_logits, end_logits)
    result = squad_metrics.evaluate_v1(data, predictions)
    assert result == {"exact_match": 100.0, "f1": 100.0}
    # Even the answer cut mid-word: "Nieuwland" splits into pieces at "Nieuwl".
    assert predictions["5733b1da4776f4190066106b"] == "Father Julius Nieuwl"
    assert predictions["5733b1da4776f41900661068"] == "1882"
    assert nbest["5733b1da4776f41900661068"][0]["probability"] > 0.9
    assert null_odds == {}


def _long_example(is_impossible=False):
    filler = " ".join(f"word{i}" for i in range(120))
    context = f"{filler} The treasure is hidden under the old oak tree near the river."
    start = context.index("the old oak tree")
    answers = [] if is_impossible else [{"text": "the old oak tree", "answer_start": start}]
    return {"title": "t", "paragraphs": [{"context": context, "qas": [{
        "id": "long", "question": "Where is the treasure?", "answers": answers,
        "is_impossible": is_impossible}]}]}


def test_answer_in_a_later_window_is_found(tokenizer):
    examples, _ = squad_reader.parse_squad_examples([_long_example()], is_training=True)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=64, doc_stride=32, max_query_length=16,
        is_training=True)
    assert len(features) > 2
    windows = np.flatnonzero(features.start_positions > 0)
    assert windows.min() >= 1  # not in the first window
    for window in windows:
        assert _span_text(examples[0], features, window, features.start_positions[window],
                          features.end_positions[window]) == "the old oak tree"
    start_logits = np.zeros(features.input_word_ids.shape, np.float32)
    end_logits = np.zeros_like(start_logits)
    best = windows[-1]
    start_logits[best, features.start_positions[best]] = 8.0
    end_logits[best, features.end_positions[best]] = 8.0
    # Every token is scored in exactly one window (its max-context one).
    doc_tokens = features.token_byte_spans[..., 0] >= 0
    assert np.all(features.token_is_max_context <= doc_tokens)
    starts_covered = {tuple(s) for w in range(len(features))
                      for s in features.token_byte_spans[w][features.token_is_max_context[w]]}
    assert len(starts_covered) == int(features.token_is_max_context.sum())
    eval_examples, _ = squad_reader.parse_squad_examples([_long_example()], is_training=False)
    predictions, _, _ = squad_postprocess.postprocess_predictions(
        eval_examples, features, start_logits, end_logits)
    assert predictions["long"] == "the old oak tree"


def test_v2_negative_and_null_threshold(tokenizer, tmp_path):
    data = [_long_example(is_impossible=True)]
    examples, _ = squad_reader.parse_squad_examples(data, is_training=True,
                                                    version_2_with_negative=True)
    assert examples[0].is_impossible
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=64, doc_stride=32, is_training=True)
    assert np.all(features.start_positions == 0) and np.all(features.end_positions == 0)
    start_logits = np.zeros(features.input_word_ids.shape, np.float32)
    end_logits = np.zeros_like(start_logits)
    start_logits[:, 0] = end_logits[:, 0] = 3.0   # null score 6 in every window
    start_logits[0, 20] = end_logits[0, 21] = 2.0  # best span scores 4
    args = (examples, features, start_logits, end_logits)
    predictions, nbest, odds = squad_postprocess.postprocess_predictions(
        *args, version_2_with_negative=True)
    assert predictions["long"] == "" and odds["long"] == pytest.approx(2.0)
    assert "" in [entry["text"] for entry in nbest["long"]]
    predictions, _, _ = squad_postprocess.postprocess_predictions(
        *args, version_2_with_negative=True, null_score_diff_threshold=2.5)
    assert predictions["long"] != ""
    paths = squad_postprocess.write_predictions(str(tmp_path), predictions, nbest, odds)
    assert [os.path.basename(p) for p in paths] == [
        "predictions.json", "nbest_predictions.json", "null_odds.json"]
    assert json.loads(open(paths[2]).read()) == {"long": pytest.approx(2.0)}
    assert squad_metrics.evaluate_v2(data, {"long": ""})["NoAns_exact"] == 100.0


def test_misaligned_answer_start_is_skipped_and_counted():
    data = [{"title": "t", "paragraphs": [{"context": "Paris is in France.", "qas": [
        {"id": "ok", "question": "Where?", "answers": [{"text": "France", "answer_start": 12}]},
        {"id": "bad", "question": "Where?", "answers": [{"text": "France", "answer_start": 0}]},
    ]}]}]
    examples, skipped = squad_reader.parse_squad_examples(data, is_training=True)
    assert [e.qas_id for e in examples] == ["ok"] and skipped == 1
    # Evaluation keeps every question: gold answers are scored, not aligned.
    assert len(squad_reader.parse_squad_examples(data, is_training=False)[0]) == 2


def test_bad_input(tokenizer, tmp_path):
    examples, _ = squad_reader.parse_squad_examples([_long_example()], is_training=False)
    with pytest.raises(ValueError, match="max_seq_length=8 is too short for question 'long'"):
        squad_features.convert_examples_to_features(examples, tokenizer, max_seq_length=8)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        squad_reader.read_squad_examples(str(empty), is_training=True)
    with pytest.raises(DataError, match=r"paragraphs\[0\].qas\[0\]: missing key 'id'"):
        squad_reader.parse_squad_examples(
            [{"paragraphs": [{"context": "c", "qas": [{"question": "q"}]}]}], is_training=False)
    wrong_type = [{"paragraphs": [{"context": "c", "qas": [
        {"id": "x", "question": "q", "answers": [{"text": "c", "answer_start": "0"}]}]}]}]
    with pytest.raises(DataError, match=r"qas\[0\].answers\[0\]: 'answer_start' must be of "
                                        "type int, found str"):
        squad_reader.parse_squad_examples(wrong_type, is_training=True)
    with pytest.raises(DataError, match=r"data\[0\]: 'paragraphs' must be of type list"):
        squad_reader.parse_squad_examples([{"paragraphs": 3}], is_training=False)
    not_a_list = tmp_path / "object.json"
    not_a_list.write_text('{"data": {"title": "t"}}')
    with pytest.raises(DataError, match="top-level \"data\" list"):
        squad_reader.read_squad_examples(str(not_a_list), is_training=False)
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"data": [\n{"title": "caf\xe9"}]}')
    with pytest.raises(DataError, match=r"latin1.json:2: not valid UTF-8"):
        squad_reader.read_squad_examples(str(latin1), is_training=False)


def test_tfds_squad_v2_on_a_mocked_prepared_dataset(tmp_path, monkeypatch):
    import tensorflow_datasets as tfds

    with pytest.raises(FileNotFoundError, match="squad/v1.1 is not prepared"):
        squad_reader.tfds_squad_data("train", str(tmp_path / "none"))
    monkeypatch.setattr(tfds.core.DatasetBuilder, "is_prepared", lambda self: True)
    with tfds.testing.mock_data(num_examples=4, policy=tfds.testing.MockPolicy.USE_CODE):
        data = squad_reader.tfds_squad_data("validation", str(tmp_path), True)
    examples, _ = squad_reader.parse_squad_examples(data, False, True, "tfds")
    assert len(examples) == 4 and all(isinstance(e.context, str) for e in examples)
