"""The pretrainer and the task models: outputs, heads, serialization, fit."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer,
                            BertSpanLabeler, BertTokenClassifier)
from tests.models.conftest import TINY, encoder_batch

POSITIONS = tf.constant([[1, 2], [0, 3], [4, 4]])


def _choices(batch):
    return {name: tf.stack([value, tf.reverse(value, [0])], axis=1) for name, value in batch.items()}


CASES = {
    "pretrainer": (lambda e: BertPretrainer(e), lambda b: dict(b, masked_lm_positions=POSITIONS),
                   {"mlm_logits": (3, 2, TINY.vocab_size), "nsp_logits": (3, 2)}),
    "mlm_only": (lambda e: BertPretrainer(e, use_next_sentence=False),
                 lambda b: dict(b, masked_lm_positions=POSITIONS),
                 {"mlm_logits": (3, 2, TINY.vocab_size)}),
    "classifier": (lambda e: BertClassifier(e, num_classes=4), lambda b: b, (3, 4)),
    "regressor": (lambda e: BertClassifier(e, num_classes=1), lambda b: b, (3, 1)),
    "token_classifier": (lambda e: BertTokenClassifier(e, num_classes=5), lambda b: b, (3, 7, 5)),
    "span_labeler": (lambda e: BertSpanLabeler(e), lambda b: b,
                     {"start_logits": (3, 7), "end_logits": (3, 7)}),
    "multiple_choice": (lambda e: BertMultipleChoice(e, num_choices=2), _choices, (3, 2)),
}


def _shapes(outputs):
    return tf.nest.map_structure(lambda t: tuple(t.shape), outputs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_and_keras_round_trip(name, tmp_path):
    build, make_inputs, expected = CASES[name]
    model = build(BertEncoder(TINY))
    inputs = make_inputs(encoder_batch())
    outputs = model(inputs)
    assert _shapes(outputs) == expected
    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is type(model)
    tf.nest.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6),
                          loaded(inputs), outputs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_outputs_under_mixed_bfloat16(name):
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    build, make_inputs, _ = CASES[name]
    outputs = build(BertEncoder(TINY))(make_inputs(encoder_batch()))
    assert all(t.dtype == tf.float32 for t in tf.nest.flatten(outputs))


def test_task_model_shares_the_encoder_instance():
    encoder = BertEncoder(TINY)
    classifier = BertClassifier(encoder, num_classes=2)
    tagger = BertTokenClassifier(encoder, num_classes=3)
    assert classifier.encoder is encoder and tagger.encoder is encoder
    assert classifier.checkpoint_items()["encoder"] is encoder


def test_masked_lm_logits_use_tied_embeddings():
    pretrainer = BertPretrainer(BertEncoder(TINY))
    batch = dict(encoder_batch(), masked_lm_positions=POSITIONS)
    logits = pretrainer(batch)["mlm_logits"].numpy()
    head = pretrainer.masked_lm
    sequence = pretrainer.encoder(batch)["sequence_output"].numpy()
    gathered = np.take_along_axis(sequence, POSITIONS.numpy()[..., None], axis=1)
    kernel, bias = (w.numpy() for w in head.transform.weights)
    hidden = keras.activations.gelu(gathered @ kernel + bias, approximate=False).numpy()
    gamma, beta = (w.numpy() for w in head.layer_norm.weights)
    mean, var = hidden.mean(-1, keepdims=True), hidden.var(-1, keepdims=True)
    hidden = (hidden - mean) / np.sqrt(var + TINY.layer_norm_eps) * gamma + beta
    table = pretrainer.encoder.embeddings.word_embeddings.embeddings.numpy()
    np.testing.assert_allclose(logits, hidden @ table.T + head.output_bias.numpy(), atol=1e-5)


def test_multiple_choice_scores_each_choice_independently():
    model = BertMultipleChoice(BertEncoder(TINY), num_choices=2)
    batch = encoder_batch()
    logits = model(_choices(batch)).numpy()
    swapped = model({name: tf.reverse(value, [1]) for name, value in _choices(batch).items()})
    np.testing.assert_allclose(logits[:, ::-1], swapped, atol=1e-5)


def test_fit_reduces_the_loss():
    # Label 1 iff token 7 occurs in the sentence: learnable from the pooled output.
    rng = np.random.default_rng(0)
    ids = rng.integers(8, TINY.vocab_size, size=(64, 8)).astype(np.int32)
    labels = rng.integers(0, 2, size=64).astype(np.int32)
    ids[labels == 1, rng.integers(1, 8)] = 7
    features = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
                "input_type_ids": np.zeros_like(ids)}
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)
    model = BertClassifier(BertEncoder(TINY), num_classes=2)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    history = model.fit(dataset, epochs=15, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
