"""The pretraining loss of packed rows: a row is one example, NSP counted per sequence."""

import numpy as np

from bert_tf.training.pretraining_loss import majority_label_share, pretraining_loss_fn


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _packed_batch():
    rng = np.random.default_rng(0)
    return {
        # Row 0 holds sequences 1, 2 (and padding), row 1 one sequence filling the row.
        "input_mask": np.array([[1, 1, 1, 2, 2, 0], [1, 1, 1, 1, 1, 1]], np.int32),
        "masked_lm_ids": np.array([[3, 4, 5], [6, 7, 0]], np.int32),
        "masked_lm_weights": np.array([[1, 1, 1], [1, 1, 0]], np.float32),
        "next_sentence_labels": np.array([[0, 1, 0], [1, 0, 0]], np.int32),
        "next_sentence_weights": np.array([[1, 1, 0], [1, 0, 0]], np.float32),
    }, {"mlm_logits": rng.normal(size=(2, 3, 9)).astype(np.float32),
        "nsp_logits": rng.normal(size=(2, 3, 2)).astype(np.float32)}


def test_packed_row_loss_equals_hand_computation():
    batch, outputs = _packed_batch()
    loss, metrics = pretraining_loss_fn(global_batch_size=4)(batch, outputs)
    mlm = _log_softmax(outputs["mlm_logits"].astype(np.float64))
    w = batch["masked_lm_weights"]
    token_nll = -np.take_along_axis(mlm, batch["masked_lm_ids"][..., None], -1)[..., 0]
    nsp = _log_softmax(outputs["nsp_logits"].astype(np.float64))
    nsp_nll = -np.take_along_axis(nsp, batch["next_sentence_labels"][..., None], -1)[..., 0]
    v = batch["next_sentence_weights"]
    # Per row: mean over its predictions + mean over its sequences; the sum over the global batch.
    expected = ((token_nll * w).sum(1) / w.sum(1) + (nsp_nll * v).sum(1) / v.sum(1)).sum() / 4
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    correct = (nsp.argmax(-1) == batch["next_sentence_labels"]) * v
    np.testing.assert_allclose([float(x) for x in metrics["nsp_accuracy"]], [correct.sum(), 3])
    np.testing.assert_allclose([float(x) for x in metrics["nsp_loss"]], [(nsp_nll * v).sum(), 3],
                               rtol=1e-5)
    # Sequence numbers 1..k are real tokens; 0 is padding.
    np.testing.assert_allclose([float(x) for x in metrics["real_tokens"]], [11, 12])


def test_majority_label_share_counts_sequences_not_empty_slots():
    batch, _ = _packed_batch()
    # Sequences' labels: 0, 1, 1 -> 2/3; counting the three empty slots (label 0) would say 4/6.
    assert majority_label_share([batch]) == 2 / 3
