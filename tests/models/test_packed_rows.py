"""Rows of several sequences (packed records): each sequence gets what it gets alone.

A row holds sequences one after the other; `input_mask` numbers them 1..k,
`input_position_ids` restarts at 0 for each, `next_sentence_positions` points at each [CLS].
Attention is block-diagonal, so the masked-LM and NSP logits of every sequence must equal
those of the same sequence alone in its own padded row (dropout off), in inference, in
training (where the last block runs only at the gathered positions) and under XLA, and the
gradients of the summed losses must agree too.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.layers.attention import block_diagonal_mask
from bert_tf.models import BertEncoder, BertPretrainer
from bert_tf.training.cross_entropy import sparse_cross_entropy

CONFIG = BertConfig(vocab_size=53, hidden_size=12, num_hidden_layers=2, num_attention_heads=3,
                    intermediate_size=20, max_position_embeddings=32, type_vocab_size=2,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
S, P, K = 24, 6, 3
ROWS = [[9, 6, 7], [11, 5]]  # sequence lengths of each packed row (the second leaves padding)


def _sequences(seed=0):
    """Sequences as create_pretraining_data makes them: ids, segments, 2 masked positions, label."""
    rng = np.random.default_rng(seed)
    sequences = []
    for length in (n for row in ROWS for n in row):
        cut = int(rng.integers(2, length - 1))
        ids = [2] + rng.integers(5, CONFIG.vocab_size, length - 2).tolist() + [3]
        masked = sorted(rng.choice(np.arange(1, length - 1), 2, replace=False).tolist())
        sequences.append({"ids": ids, "types": [0] * cut + [1] * (length - cut), "masked": masked,
                          "label": int(rng.integers(0, 2))})
    return sequences


def _packed_batch(sequences):
    batch = {name: np.zeros([len(ROWS), S], np.int32) for name in
             ("input_word_ids", "input_mask", "input_type_ids", "input_position_ids")}
    batch.update(masked_lm_positions=np.zeros([len(ROWS), P], np.int32),
                 next_sentence_positions=np.zeros([len(ROWS), K], np.int32))
    index = 0
    for row, lengths in enumerate(ROWS):
        start, slot = 0, 0
        for number, length in enumerate(lengths, 1):
            s = sequences[index]
            end = start + length
            batch["input_word_ids"][row, start:end] = s["ids"]
            batch["input_mask"][row, start:end] = number
            batch["input_type_ids"][row, start:end] = s["types"]
            batch["input_position_ids"][row, start:end] = np.arange(length)
            batch["masked_lm_positions"][row, slot:slot + 2] = np.add(s["masked"], start)
            batch["next_sentence_positions"][row, number - 1] = start
            start, slot, index = end, slot + 2, index + 1
    return {k: tf.constant(v) for k, v in batch.items()}


def _single_batch(sequences):
    """Each sequence alone in its own padded row of S."""
    batch = {name: np.zeros([len(sequences), S], np.int32) for name in
             ("input_word_ids", "input_mask", "input_type_ids")}
    batch["masked_lm_positions"] = np.array([s["masked"] for s in sequences], np.int32)
    for row, s in enumerate(sequences):
        length = len(s["ids"])
        batch["input_word_ids"][row, :length] = s["ids"]
        batch["input_mask"][row, :length] = 1
        batch["input_type_ids"][row, :length] = s["types"]
    return {k: tf.constant(v) for k, v in batch.items()}


def _slots():
    """(packed row, masked slot, NSP slot) of each sequence, in order."""
    return [(row, 2 * number, number) for row, lengths in enumerate(ROWS)
            for number in range(len(lengths))]


@pytest.fixture(scope="module")
def models():
    """(packed-row pretrainer, one-sequence pretrainer) sharing one encoder and heads."""
    encoder = BertEncoder(CONFIG)
    single = BertPretrainer(encoder)
    packed = BertPretrainer(encoder, packed_rows=True)
    packed.masked_lm.set_weights(single.masked_lm.get_weights())
    packed.next_sentence.set_weights(single.next_sentence.get_weights())
    return packed, single


def _assert_same_logits(packed_out, single_out):
    assert packed_out["nsp_logits"].shape == (len(ROWS), K, 2)
    for index, (row, slot, number) in enumerate(_slots()):
        np.testing.assert_allclose(packed_out["mlm_logits"][row, slot:slot + 2],
                                   single_out["mlm_logits"][index], atol=1e-5, rtol=0)
        np.testing.assert_allclose(packed_out["nsp_logits"][row, number],
                                   single_out["nsp_logits"][index], atol=1e-5, rtol=0)


@pytest.mark.parametrize("training", [False, True])
def test_each_sequence_of_a_packed_row_gets_its_own_logits(models, training):
    packed, single = models
    sequences = _sequences()
    _assert_same_logits(packed(_packed_batch(sequences), training=training),
                        single(_single_batch(sequences), training=training))


def test_under_xla_too(models):
    packed, single = models
    sequences = _sequences(seed=1)
    compiled = tf.function(lambda batch: packed(batch, training=True), jit_compile=True)
    _assert_same_logits(compiled(_packed_batch(sequences)), single(_single_batch(sequences),
                                                                   training=True))


def test_gradients_equal_those_of_the_sequences_alone(models):
    packed, single = models
    sequences = _sequences(seed=2)
    labels = tf.constant([s["label"] for s in sequences])
    masked_ids = tf.constant([[s["ids"][p] for p in s["masked"]] for s in sequences])

    def packed_loss(out):  # every real prediction and sequence once, as a sum
        logits = tf.concat([out["mlm_logits"][row, slot:slot + 2][tf.newaxis]
                            for row, slot, _ in _slots()], 0)
        nsp = tf.stack([out["nsp_logits"][row, number] for row, _, number in _slots()])
        return tf.reduce_sum(sparse_cross_entropy(masked_ids, logits)[0]) + tf.reduce_sum(
            sparse_cross_entropy(labels, nsp)[0])

    def single_loss(out):
        return tf.reduce_sum(
            sparse_cross_entropy(masked_ids, out["mlm_logits"])[0]
        ) + tf.reduce_sum(sparse_cross_entropy(labels, out["nsp_logits"])[0])

    gradients = []
    for model, batch, loss_fn in ((packed, _packed_batch(sequences), packed_loss),
                                  (single, _single_batch(sequences), single_loss)):
        with tf.GradientTape() as tape:
            loss = loss_fn(model(batch, training=True))
        gradients.append((float(loss), tape.gradient(loss, model.trainable_variables)))
    (packed_value, packed_grads), (single_value, single_grads) = gradients
    np.testing.assert_allclose(packed_value, single_value, rtol=1e-5)
    for variable, p, q in zip(packed.trainable_variables, packed_grads, single_grads):
        np.testing.assert_allclose(tf.convert_to_tensor(p), tf.convert_to_tensor(q), atol=2e-5,
                                   rtol=1e-4, err_msg=variable.path)


def test_block_diagonal_mask():
    mask = block_diagonal_mask(tf.constant([[1, 1, 2, 3, 3, 0]]))
    assert mask.shape == (1, 1, 6, 6) and mask.dtype == tf.float32
    allowed = (mask[0, 0] == 0).numpy().astype(int)
    np.testing.assert_array_equal(allowed, [[1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0],
                                            [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0],
                                            [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0]])


def test_packed_training_with_packed_rows_is_refused_naming_the_flag():
    encoder = BertEncoder(CONFIG, packed_training=True)
    batch = _packed_batch(_sequences())
    inputs = {k: batch[k] for k in ("input_word_ids", "input_mask", "input_type_ids",
                                    "input_position_ids")}
    with pytest.raises(ValueError, match="--packed_training"):
        encoder(inputs, training=True)
    # In inference the encoder computes packed rows padded (its default packed_inference skips
    # them).
    assert encoder(inputs)["sequence_output"].shape == (len(ROWS), S, CONFIG.hidden_size)
