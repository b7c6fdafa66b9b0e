"""The pretraining loss against a numpy hand computation, the LTR targets, the baseline."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pipelines.left_to_right import to_left_to_right
from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.pretraining_loss import (
    majority_label_share,
    pretraining_loss_fn,
    unigram_baseline_accuracy,
)
from bert_tf.training.train_step import model_inputs
from tests.training.conftest import synthetic_examples


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_loss_equals_hand_computation_from_model_outputs(dropout_free_config):
    model = build_pretrainer(dropout_free_config)
    batch = synthetic_examples(6)
    outputs = model(model_inputs(model, batch), training=False)
    loss, metrics = pretraining_loss_fn(global_batch_size=12)(batch, outputs)

    mlm = _log_softmax(outputs["mlm_logits"].numpy().astype(np.float64))
    ids, w = batch["masked_lm_ids"].numpy(), batch["masked_lm_weights"].numpy()
    token_nll = -np.take_along_axis(mlm, ids[..., None], -1)[..., 0]
    nsp = _log_softmax(outputs["nsp_logits"].numpy().astype(np.float64))
    labels = batch["next_sentence_labels"].numpy()
    nsp_nll = -nsp[np.arange(6), labels]
    # Each example: mean NLL over its real predictions + NSP NLL; divided by the global batch.
    expected = ((token_nll * w).sum(1) / w.sum(1) + nsp_nll).sum() / 12
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)

    correct = (mlm.argmax(-1) == ids) * w
    np.testing.assert_allclose([float(x) for x in metrics["mlm_accuracy"]],
                               [correct.sum(), w.sum()], rtol=1e-6)
    np.testing.assert_allclose(float(metrics["mlm_loss"][0]), (token_nll * w).sum(), rtol=1e-5)
    np.testing.assert_allclose(float(metrics["nsp_loss"][0]), nsp_nll.sum(), rtol=1e-5)
    assert float(metrics["nsp_accuracy"][0]) == (nsp.argmax(-1) == labels).sum()


def test_mlm_only_loss_has_no_nsp_term(dropout_free_config):
    model = build_pretrainer(dropout_free_config, use_next_sentence=False)
    batch = synthetic_examples(4)
    outputs = model(model_inputs(model, batch), training=False)
    assert "nsp_logits" not in outputs
    loss, metrics = pretraining_loss_fn(4, use_next_sentence=False)(batch, outputs)
    assert set(metrics) == {"mlm_accuracy", "mlm_loss", "real_tokens"}
    real, slots = (float(value) for value in metrics["real_tokens"])
    assert (real, slots) == (batch["input_mask"].numpy().sum(), batch["input_mask"].numpy().size)
    # With equal prediction counts per example, per-example means equal the token mean.
    mean_token_loss = float(metrics["mlm_loss"][0] / metrics["mlm_loss"][1])
    assert float(loss) > 0 and np.isfinite(mean_token_loss)


def test_left_to_right_targets_are_the_next_unmasked_tokens():
    original = tf.constant([[2, 10, 11, 12, 3, 0]])
    batch = {
        "input_word_ids": tf.constant([[2, 4, 11, 4, 3, 0]]),  # 4 = [MASK] at 1 and 3
        "input_mask": tf.constant([[1, 1, 1, 1, 1, 0]]),
        "input_type_ids": tf.zeros([1, 6], tf.int32),
        "masked_lm_positions": tf.constant([[1, 3, 0]]),
        "masked_lm_ids": tf.constant([[10, 12, 0]]),
        "masked_lm_weights": tf.constant([[1.0, 1.0, 0.0]]),
        "next_sentence_labels": tf.constant([0]),
    }
    ltr = to_left_to_right(batch)
    np.testing.assert_array_equal(ltr["input_word_ids"], original)
    np.testing.assert_array_equal(ltr["masked_lm_positions"], [[0, 1, 2, 3, 4]])
    np.testing.assert_array_equal(ltr["masked_lm_ids"], [[10, 11, 12, 3, 0]])
    np.testing.assert_array_equal(ltr["masked_lm_weights"], [[1, 1, 1, 1, 0]])


def test_left_to_right_model_is_causal(dropout_free_config):
    model = build_pretrainer(dropout_free_config, left_to_right=True)
    assert model.encoder.causal_attention and not model.use_next_sentence
    batch = to_left_to_right(synthetic_examples(2))
    changed = dict(batch, input_word_ids=tf.concat(
        [batch["input_word_ids"][:, :-1], tf.fill([2, 1], 7)], axis=1))
    first = model(model_inputs(model, batch))["mlm_logits"]
    second = model(model_inputs(model, changed))["mlm_logits"]
    # Changing the last token cannot move any prediction made from earlier positions.
    np.testing.assert_allclose(first[:, :-1], second[:, :-1], atol=1e-5)


def test_unigram_baseline_is_the_share_of_the_most_frequent_target():
    batches = [{"masked_lm_ids": tf.constant([[5, 5, 9], [5, 7, 0]]),
                "masked_lm_weights": tf.constant([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])}]
    assert unigram_baseline_accuracy(batches) == pytest.approx(3 / 5)


def test_nsp_majority_baseline_is_the_share_of_the_commoner_label():
    batches = [{"next_sentence_labels": tf.constant([[1], [1], [0]])},
               {"next_sentence_labels": tf.constant([[1], [0]])}]
    assert majority_label_share(batches) == pytest.approx(3 / 5)
