"""Static pipeline: google-research records, validation, sharding, resuming."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.data.pipelines import pretraining_dataset as pd
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer

S, P = 16, 4


def _google_research_record(seed, v2_names=False, drop=None, seq_length=S):
    """A record built the way google-research's write_instance_to_example_files does."""
    rng = np.random.default_rng(seed)
    length = 12
    ids = [101] + rng.integers(1000, 2000, length - 4).tolist() + [102, 2000 + seed, 102]
    features = {"input_word_ids" if v2_names else "input_ids": ids + [0] * (seq_length - length),
                "input_mask": [1] * length + [0] * (seq_length - length), "input_type_ids"
                if v2_names else "segment_ids": [0] * (length - 2) + [1, 1]
                + [0] * (seq_length - length), "masked_lm_positions": [2, 5, 0, 0],
                "masked_lm_ids": [ids[2], ids[5], 0, 0], "masked_lm_weights": [1.0, 1.0, 0.0, 0.0],
                "next_sentence_labels": [seed % 2],}
    feature = {k: tf.train.Feature(float_list=tf.train.FloatList(value=v))
               if k == "masked_lm_weights"
               else tf.train.Feature(int64_list=tf.train.Int64List(value=v))
               for k, v in features.items() if k != drop}
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    return example.SerializeToString(), features


def _write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    return str(path)


@pytest.mark.parametrize("v2_names", [False, True])
def test_google_research_record_to_model_inputs(tmp_path, v2_names):
    records = [_google_research_record(i, v2_names) for i in range(6)]
    path = _write(tmp_path / "gr.tfrecord", [r for r, _ in records])
    batch = next(iter(pd.pretraining_dataset(path, 6, S, P, is_training=False)))
    assert {k: v.dtype for k, v in batch.items()} == {
        "input_word_ids": tf.int32, "input_mask": tf.int32, "input_type_ids": tf.int32,
        "masked_lm_positions": tf.int32, "masked_lm_ids": tf.int32, "masked_lm_weights": tf.float32,
        "next_sentence_labels": tf.int32}
    word_ids = "input_word_ids" if v2_names else "input_ids"
    np.testing.assert_array_equal(batch["input_word_ids"], [f[word_ids] for _, f in records])
    np.testing.assert_array_equal(batch["next_sentence_labels"],
                                  [f["next_sentence_labels"][0] for _, f in records])
    np.testing.assert_allclose(batch["masked_lm_weights"],
                               [f["masked_lm_weights"] for _, f in records])


def test_google_research_record_trains(tmp_path):
    path = _write(tmp_path / "gr.tfrecord", [_google_research_record(i)[0] for i in range(8)])
    batch = next(iter(pd.pretraining_dataset(path, 4, S, P, is_training=True)))
    config = BertConfig(vocab_size=2100, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=S)
    model = BertPretrainer(BertEncoder(config))
    optimizer = keras.optimizers.SGD(0.1)
    losses = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            outputs = model({k: batch[k] for k in ("input_word_ids", "input_mask", "input_type_ids",
                                                    "masked_lm_positions")}, training=True)
            mlm = keras.losses.sparse_categorical_crossentropy(batch["masked_lm_ids"],
                                                               outputs["mlm_logits"],
                                                               from_logits=True)
            nsp = keras.losses.sparse_categorical_crossentropy(batch["next_sentence_labels"],
                                                               outputs["nsp_logits"],
                                                               from_logits=True)
            weights = batch["masked_lm_weights"]
            loss = tf.reduce_sum(mlm * weights) / tf.reduce_sum(weights)
            loss += tf.reduce_mean(nsp)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))
        losses.append(float(loss))
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


@pytest.mark.parametrize("drop, seq_length, message", [
    ("masked_lm_ids", S, "has no feature 'masked_lm_ids'"),
    (None, 20, "feature 'input_ids' has 20 values, expected --max_seq_length=16"),
])
def test_bad_records_name_file_and_feature(tmp_path, drop, seq_length, message):
    path = _write(tmp_path / "bad.tfrecord",
                  [_google_research_record(0, drop=drop, seq_length=seq_length)[0]])
    with pytest.raises(pd.RecordFormatError, match=f"bad.tfrecord: .*{message}"):
        pd.pretraining_dataset(path, 2, S, P, is_training=False)


def test_not_a_tfrecord_file(tmp_path):
    (tmp_path / "text.tfrecord").write_text("this is plain text, not records\n" * 4)
    with pytest.raises(pd.RecordFormatError, match="text.tfrecord: cannot read TFRecords"):
        pd.pretraining_dataset(str(tmp_path / "text.tfrecord"), 2, S, P, is_training=False)
    with pytest.raises(pd.InputError, match="matches no file"):
        pd.pretraining_dataset(str(tmp_path / "none-*"), 2, S, P, is_training=False)


def _input_context(pipeline_id):
    return tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline_id,
                                      num_replicas_in_sync=2)


@pytest.mark.parametrize("num_files", [1, 2])
def test_input_context_shards(tmp_path, num_files):
    paths = [_write(tmp_path / f"r{f}.tfrecord",
                    [_google_research_record(10 * f + i)[0] for i in range(6)])
             for f in range(num_files)]
    seen = []
    for pipeline_id in range(2):
        batches = list(pd.pretraining_dataset(paths, 4, S, P, is_training=False,
                                              input_context=_input_context(pipeline_id)))
        assert all(b["input_word_ids"].shape[0] <= 2 for b in batches)  # Per-replica share of 4.
        seen.append({int(b) for batch in batches for b in batch["input_word_ids"][:, 10].numpy()})
    assert not seen[0] & seen[1] and len(seen[0] | seen[1]) == 6 * num_files


def test_deterministic_order_and_skip(static_records):
    def batches(skip=0):
        dataset = pd.pretraining_dataset(static_records["output_files"], 32, 128, 20,
                                         is_training=True, seed=3, skip_batches=skip)
        return [b["input_word_ids"].numpy() for b in dataset.take(4)]

    full = batches()
    np.testing.assert_array_equal(np.stack(full), np.stack(batches()))
    np.testing.assert_array_equal(np.stack(full[2:]), np.stack(batches(skip=2)[:2]))


def test_use_next_sentence_false_zeros_labels(static_records):
    batch = next(iter(pd.pretraining_dataset(static_records["output_files"], 64, 128, 20,
                                             is_training=False, use_next_sentence=False)))
    assert not np.any(batch["next_sentence_labels"])
