"""Fine-tuning pipelines that pad each batch to its own longest sequence (`--padding=longest`)
give the fixed-length outputs at real positions, in input order: classifier logits, NER tags,
SQuAD spans; training batches keep their labels and hold like lengths; and fine-tuning with
them reaches the fixed-length metric on the same seed."""

import math
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.finetuning import conll, sentence_task, squad_features, squad_postprocess, squad_reader
from bert_tf.finetuning.adapters import classifier_adapter
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FinetuningOptions
from bert_tf.finetuning.sentence_task import SentenceExamples, SentenceTask
from bert_tf.finetuning.task_adapter import predict_outputs
from bert_tf.layers.traced_call import traced_call
from bert_tf.models import BertClassifier, BertEncoder, BertSpanLabeler, BertTokenClassifier
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

SEQ = 64
WORDS = "the cat sat on a mat while rain fell over quiet hills and rivers".split()


def _sentence(rng, length):
    return " ".join(rng.choice(WORDS, length))


def _examples(rng, count, labels=None):
    lengths = rng.permutation(np.arange(count) % 20 + 1)  # short and long, shuffled
    texts = [_sentence(rng, n) for n in lengths]
    return SentenceExamples(texts, None, labels, [str(i) for i in range(count)], "test")


@pytest.fixture(scope="module")
def vocab(tiny_model_dir):
    return os.path.join(tiny_model_dir, "vocab.txt")


@pytest.fixture(scope="module")
def encoder(tiny_model_dir):
    return BertEncoder.from_pretrained(tiny_model_dir)


def _widths(dataset):
    return {int(inputs["input_word_ids"].shape[-1]) for inputs in
            (batch[0] if isinstance(batch, tuple) else batch for batch in dataset)}


def test_classifier_logits_in_input_order_equal_fixed_length(vocab, encoder):
    model = BertClassifier(encoder, num_classes=3)
    examples = _examples(np.random.default_rng(0), 21)
    logits = {}
    for padding in ("fixed", "longest"):
        preprocessor = BertPreprocessor(vocab, seq_length=SEQ, padding=padding)
        dataset = sentence_task.make_dataset(examples, preprocessor, batch_size=4)
        logits[padding] = predict_outputs(model, dataset)
    assert len(_widths(sentence_task.make_dataset(
        examples, BertPreprocessor(vocab, seq_length=SEQ, padding="longest"), 4))) > 1
    np.testing.assert_allclose(logits["longest"], logits["fixed"], atol=1e-5)
    # Row i is example i: each example alone gives its row.
    alone = BertPreprocessor(vocab, seq_length=SEQ, padding="longest")
    for i in (0, 7, 20):
        single = model(alone(tf.constant([examples.text_a[i]])), training=False).numpy()
        np.testing.assert_allclose(logits["longest"][i], single[0], atol=1e-5)


def test_ner_logits_and_tags_equal_fixed_length(vocab, encoder):
    rng = np.random.default_rng(1)
    words = [list(rng.choice(WORDS, n)) for n in rng.permutation(np.arange(18) % 12 + 1)]
    tags = [["B-LOC" if w == "hills" else "O" for w in sentence] for sentence in words]
    sentences = conll.TaggedSentences(words, tags, "test")
    names = ("O", "B-LOC", "I-LOC")
    features = conll.convert_sentences_to_features(sentences, BertTokenizer(vocab), names, SEQ)
    model = BertTokenClassifier(encoder, len(names))
    fixed = predict_outputs(model, conll.make_dataset(features, 4, padding="fixed"))
    longest = predict_outputs(model, conll.make_dataset(features, 4, padding="longest"))
    assert longest.shape[1] < SEQ
    real = features.input_mask[:, :longest.shape[1]].astype(bool)
    np.testing.assert_allclose(longest[real], fixed[:, :longest.shape[1]][real], atol=1e-5)
    assert conll.predicted_tags(sentences, features, longest, names) == \
        conll.predicted_tags(sentences, features, fixed, names)
    # One graph per batch shape of the model's datasets, the partial last batch included, kept
    # for the next evaluation (a fine-tuning run evaluates after every epoch).
    again = predict_outputs(model, conll.make_dataset(features, 4, padding="fixed"))
    np.testing.assert_array_equal(again, fixed)
    assert traced_call(model, training=False).experimental_get_tracing_count() == 2


def test_squad_spans_equal_fixed_length(vocab, encoder):
    rng = np.random.default_rng(2)
    paragraphs = []
    for index, length in enumerate((6, 40, 12, 3, 25, 9)):
        context = _sentence(rng, length).capitalize() + "."
        paragraphs.append({"context": context, "qas": [
            {"id": f"q{index}", "question": "Where did the cat sit?", "answers": []}]})
    data = [{"title": "t", "paragraphs": paragraphs}]
    examples, _ = squad_reader.parse_squad_examples(data, False, False)
    features = squad_features.convert_examples_to_features(examples, BertTokenizer(vocab),
                                                           max_seq_length=SEQ, doc_stride=16)
    model = BertSpanLabeler(encoder)
    answers = {}
    for padding in ("fixed", "longest"):
        logits = predict_outputs(model, squad_features.make_dataset(features, 3, padding=padding))
        answers[padding] = squad_postprocess.postprocess_predictions(
            examples, features, logits["start_logits"], logits["end_logits"], n_best_size=5)
    predictions, nbest, _ = answers["longest"]
    assert predictions == answers["fixed"][0] and set(predictions) == {f"q{i}" for i in range(6)}
    for qas_id, entries in nbest.items():
        assert [e["text"] for e in entries] == [e["text"] for e in answers["fixed"][1][qas_id]]
        np.testing.assert_allclose([e["probability"] for e in entries],
                                   [e["probability"] for e in answers["fixed"][1][qas_id]],
                                   atol=1e-5)


def test_training_batches_keep_labels_and_hold_like_lengths(vocab):
    rng = np.random.default_rng(3)
    count = 512
    lengths = rng.integers(1, 40, count)
    texts = [_sentence(rng, n) for n in lengths]
    # The label is the text's own word count, so a mixed-up pair shows.
    examples = SentenceExamples(texts, None, lengths.astype(np.int32), [], "test")
    preprocessor = BertPreprocessor(vocab, seq_length=SEQ, padding="longest")
    dataset = sentence_task.make_dataset(examples, preprocessor, 8, training=True, seed=0)
    spreads, seen = [], []
    for inputs, labels in dataset.take(count // 8):
        pieces = inputs["input_mask"].numpy().sum(axis=1) - 2
        np.testing.assert_array_equal(pieces, labels.numpy())  # each word is one piece
        spreads.append(np.ptp(pieces))
        seen.append(pieces)
    unsorted = [np.ptp(lengths[i:i + 8]) for i in range(0, count, 8)]
    assert np.mean(spreads) < np.mean(unsorted) / 3
    # Not shortest first: the order of batches stays random across lengths.
    means = [np.mean(p) for p in seen]
    assert means != sorted(means)


def _good_or_bad(rng, count):
    """Sentences of 2 to 40 words, half of them from the label's word list, half filler."""
    labels = rng.integers(0, 2, count).astype(np.int32)
    cues = (["bad", "awful", "poor", "sad"], ["good", "great", "nice", "happy"])
    texts = []
    for label in labels:
        half = int(rng.integers(1, 21))
        words = list(rng.choice(cues[label], half)) + list(rng.choice(WORDS, half))
        texts.append(" ".join(rng.permutation(words)))
    return SentenceExamples(texts, None, labels, [str(i) for i in range(count)], "test")


@pytest.mark.slow
def test_finetuning_packed_to_the_batch_matches_fixed_length(vocab, tiny_model_dir, tmp_path):
    rng = np.random.default_rng(4)
    train, dev = _good_or_bad(rng, 256), _good_or_bad(rng, 200)
    task = SentenceTask("good_or_bad", "text", label_names=("bad", "good"))
    accuracy = {}
    for padding in ("fixed", "longest"):
        preprocessor = BertPreprocessor(vocab, seq_length=SEQ, padding=padding)
        adapter = classifier_adapter(task, preprocessor, train=train, dev=dev, batch_size=50)
        options = FinetuningOptions(
            output_dir=str(tmp_path / padding), model_dir=tiny_model_dir, max_seq_length=SEQ,
            padding=padding, train_batch_size=8, learning_rate=3e-3, num_train_epochs=3,
            steps_per_loop=16, seed=0)
        accuracy[padding] = run_finetuning(adapter, options)["eval"]["accuracy"]
    # Both learn the task, and differ by no more than sampling noise on 200 dev examples
    # (the batches differ, so the runs are not step-for-step equal).
    assert min(accuracy.values()) > 0.9, accuracy
    noise = 3 * math.sqrt(0.25 / len(dev))
    assert abs(accuracy["longest"] - accuracy["fixed"]) <= noise, accuracy
