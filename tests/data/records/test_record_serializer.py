"""`RecordSerializer` writes the bytes protobuf's own deterministic serializer writes."""

import random

import pytest
import tensorflow as tf

from bert_tf.data.records.instance_builder import TrainingInstance
from bert_tf.data.records.pretraining_records import RecordSerializer


def _protobuf_bytes(instance, max_seq_length, max_predictions_per_seq):
    """The reference: a `tf.train.Example` of google-research's features, serialized by protobuf."""
    def int64s(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    length, masked = len(instance.input_ids), len(instance.masked_lm_positions)
    pad, pad_masked = [0] * (max_seq_length - length), [0] * (max_predictions_per_seq - masked)
    features = {
        "input_ids": int64s(list(instance.input_ids) + pad),
        "input_mask": int64s([1] * length + pad),
        "segment_ids": int64s(list(instance.segment_ids) + pad),
        "masked_lm_positions": int64s(list(instance.masked_lm_positions) + pad_masked),
        "masked_lm_ids": int64s(list(instance.masked_lm_ids) + pad_masked),
        "masked_lm_weights": tf.train.Feature(
            float_list=tf.train.FloatList(value=[1.0] * masked + [0.0] * len(pad_masked))),
        "next_sentence_labels": int64s([int(instance.is_random_next)]),
    }
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString(deterministic=True)


def _random_instance(rng, max_seq_length, max_predictions_per_seq, vocab_size):
    length = rng.randint(3, max_seq_length)
    cut = rng.randint(1, length - 1)
    masked = sorted(rng.sample(range(length), rng.randint(0, min(length, max_predictions_per_seq))))
    return TrainingInstance([rng.randrange(vocab_size) for _ in range(length)],
                            [0] * cut + [1] * (length - cut), masked,
                            [rng.randrange(vocab_size) for _ in masked], rng.random() < 0.5)


@pytest.mark.parametrize("max_seq_length,max_predictions_per_seq,vocab_size",
                         [(128, 20, 30522), (512, 80, 250002), (8, 2, 100), (16, 0, 100)])
def test_bytes_equal_protobuf_deterministic_serialization(max_seq_length, max_predictions_per_seq,
                                                           vocab_size):
    rng = random.Random(max_seq_length)
    serialize = RecordSerializer(max_seq_length, max_predictions_per_seq, vocab_size)
    for _ in range(200):
        instance = _random_instance(rng, max_seq_length, max_predictions_per_seq, vocab_size)
        assert serialize(instance) == _protobuf_bytes(instance, max_seq_length,
                                                      max_predictions_per_seq)


def test_an_instance_that_does_not_fit_is_refused():
    serialize = RecordSerializer(max_seq_length=4, max_predictions_per_seq=1, vocab_size=10)
    with pytest.raises(ValueError, match="5 tokens / 0 predictions does not fit max_seq_length=4"):
        serialize(TrainingInstance([1, 2, 3, 4, 5], [0] * 5, [], [], False))
    with pytest.raises(ValueError, match="2 predictions"):
        serialize(TrainingInstance([1, 2, 3], [0] * 3, [1, 2], [4, 5], True))
