"""`--max_sequences_per_pack`: packed records hold exactly the instances of unpacked ones.

The records of the shipped corpus (train.txt.gz, kjv_vocab.txt) are made twice with one
seed: with K=1, whose bytes must be those of the code before packing existed (hashes below),
and with K=3, whose every sequence, read back through the training pipeline, must be one
instance of the K=1 file (and every instance one sequence).
"""

import collections
import hashlib
import os
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pipelines import pretraining_dataset
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records import sequence_packing
from bert_tf.data.records.record_options import Options
from tests.data.conftest import CORPUS_DIR, TRAIN
from tests.entry_points import assert_user_error, call_entry_point

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam

KJV_VOCAB = os.path.join(CORPUS_DIR, "kjv_vocab.txt")
S, P, K, SEED = 512, 80, 3, 36  # at 512 records are 30% padding, and rows take 3
# sha256 of the two shards that the code before --max_sequences_per_pack existed (commit
# db07bcf) wrote for `_options(1)` on train.txt.gz. Records that change on purpose (a new
# masking rule) change these; packing must never.
UNPACKED_SHA256 = ["cf29da61a262c30157a6e8b9e6cff9cf36890924cb45a4144c8095b154da71a4",
                   "37bb78757926633df4577177ce884c62b9470d8ef647948382dc81bc9a663c1b"]


def _options(max_sequences_per_pack, **overrides):
    return Options(vocab_file=KJV_VOCAB, dupe_factor=1, random_seed=SEED, max_seq_length=S,
                   max_predictions_per_seq=P, max_sequences_per_pack=max_sequences_per_pack,
                   **overrides)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """{K: create_pretraining_data's result} for K = 1 and 3, two shards each."""
    folder = tmp_path_factory.mktemp("packing")
    return {k: cpd.create_pretraining_data(TRAIN, str(folder / f"k{k}.tfrecord"), _options(k),
                                           num_output_shards=2)
            for k in (1, K)}


def _sequences(path):
    """Every sequence of a record file, read by the training pipeline: a Counter of tuples
    (ids, segment ids, masked positions within the sequence, masked ids, NSP label)."""
    found = collections.Counter()
    dataset = pretraining_dataset.pretraining_dataset(path, 256, S, P, is_training=False)
    for batch in dataset.as_numpy_iterator():
        packed = "input_position_ids" in batch
        for row in range(len(batch["input_mask"])):
            mask = batch["input_mask"][row]
            weights = batch["masked_lm_weights"][row]
            count = int(weights.sum())
            assert np.all(weights[:count] == 1) and np.all(weights[count:] == 0)
            masked = batch["masked_lm_positions"][row][weights > 0]
            masked_ids = batch["masked_lm_ids"][row][weights > 0]
            for number in range(1, mask.max() + 1):
                columns = np.nonzero(mask == number)[0]
                start, end = columns[0], columns[-1] + 1
                assert len(columns) == end - start, "a sequence is not contiguous"
                label = batch["next_sentence_labels"][row]
                if packed:
                    np.testing.assert_array_equal(batch["input_position_ids"][row][start:end],
                                                  np.arange(end - start))
                    assert batch["next_sentence_positions"][row][number - 1] == start
                    assert batch["next_sentence_weights"][row][number - 1] == 1
                    label = label[number - 1]
                mine = (masked >= start) & (masked < end)
                found[(tuple(batch["input_word_ids"][row][start:end]),
                       tuple(batch["input_type_ids"][row][start:end]),
                       tuple(masked[mine] - start), tuple(masked_ids[mine]), int(label))] += 1
            if packed:
                sequences = mask.max()
                assert np.all(batch["next_sentence_weights"][row][sequences:] == 0)
                assert np.all(batch["input_word_ids"][row][mask == 0] == 0)
    return found


def test_unpacked_records_are_byte_identical_to_the_code_before_packing(made):
    files = made[1]["output_files"]
    digests = [hashlib.sha256(open(path, "rb").read()).hexdigest() for path in files]
    assert digests == UNPACKED_SHA256
    assert made[1]["rows"] == made[1]["instances"]


def test_packed_records_hold_exactly_the_unpacked_instances(made):
    unpacked, packed = made[1], made[K]
    assert packed["instances"] == unpacked["instances"] > 3000
    assert packed["rows"] < 0.75 * packed["instances"]
    # Packing runs per shard, on that shard's records: the same instances, shard by shard.
    for unpacked_file, packed_file in zip(unpacked["output_files"], packed["output_files"]):
        assert _sequences(packed_file) == _sequences(unpacked_file)
    counts = collections.Counter()
    for record in tf.data.TFRecordDataset(packed["output_files"]).as_numpy_iterator():
        feature = tf.train.Example.FromString(record).features.feature
        counts[int(sum(feature["next_sentence_weights"].float_list.value))] += 1
        assert len(feature["next_sentence_positions"].int64_list.value) == K
    assert sum(counts.values()) == packed["rows"]
    assert sum(k * n for k, n in counts.items()) == packed["instances"]
    assert counts[2] > 500 and counts[3] > 50, counts


def test_packed_rows_are_fuller(made):
    def real_share(result):
        records = tf.data.TFRecordDataset(result["output_files"]).as_numpy_iterator()
        masks = [np.asarray(tf.train.Example.FromString(r).features.feature["input_mask"]
                            .int64_list.value) for r in records]
        return np.mean(np.concatenate(masks) > 0)

    unpacked, packed = real_share(made[1]), real_share(made[K])
    assert packed > unpacked + 0.05 and packed > 0.97, (unpacked, packed)


def test_pack_rows_keeps_every_limit_and_packs_tightly():
    rng = random.Random(0)
    lengths = [rng.randint(5, 128) for _ in range(3000)]
    predictions = [min(20, max(1, round(0.15 * n))) for n in lengths]
    rows = sequence_packing.pack_rows(lengths, predictions, 128, 20, 3)
    assert sorted(i for row in rows for i in row) == list(range(3000))
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)
    for row in rows:
        assert row == sorted(row) and 1 <= len(row) <= 3
        assert sum(lengths[i] for i in row) <= 128 and sum(predictions[i] for i in row) <= 20
    assert len(rows) <= 1.05 * sum(lengths) / 128 + 1, len(rows)
    assert rows == sequence_packing.pack_rows(lengths, predictions, 128, 20, 3)  # deterministic
    # The predictions limit binds: a row of two 64-token sequences cannot take 12 + 12.
    assert sequence_packing.pack_rows([64, 64], [12, 12], 128, 20, 3) == [[0], [1]]
    assert sequence_packing.pack_rows([64, 64], [10, 10], 128, 20, 3) == [[0, 1]]


def _protobuf_bytes(sequences, seq_length, predictions, max_sequences):
    """The reference: the packed row as a `tf.train.Example`, serialized by protobuf."""
    ids, mask, segments, positions, masked, masked_ids, starts, labels = ([] for _ in range(8))
    for number, s in enumerate(sequences, 1):
        starts.append(len(ids))
        masked += [len(ids) + p for p in s.masked_lm_positions]
        masked_ids += list(s.masked_lm_ids)
        ids += list(s.input_ids)
        segments += list(s.segment_ids)
        mask += [number] * len(s.input_ids)
        positions += list(range(len(s.input_ids)))
        labels.append(s.next_sentence_label)
    pad = lambda values, size: list(values) + [0] * (size - len(values))  # noqa: E731
    int64s = lambda values: tf.train.Feature(int64_list=tf.train.Int64List(value=values))  # noqa: E731
    floats = lambda values: tf.train.Feature(float_list=tf.train.FloatList(value=values))  # noqa: E731
    features = {"input_ids": int64s(pad(ids, seq_length)),
                "input_mask": int64s(pad(mask, seq_length)),
                "segment_ids": int64s(pad(segments, seq_length)),
                "position_ids": int64s(pad(positions, seq_length)),
                "masked_lm_positions": int64s(pad(masked, predictions)),
                "masked_lm_ids": int64s(pad(masked_ids, predictions)),
                "masked_lm_weights": floats(pad([1.0] * len(masked), predictions)),
                "next_sentence_positions": int64s(pad(starts, max_sequences)),
                "next_sentence_labels": int64s(pad(labels, max_sequences)),
                "next_sentence_weights": floats(pad([1.0] * len(sequences), max_sequences)),}
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString(deterministic=True)


@pytest.mark.parametrize("seq_length, predictions, max_sequences, vocab_size",
                         [(128, 20, 3, 4274), (512, 80, 8, 30522), (16, 3, 2, 100)])
def test_packed_serializer_writes_protobufs_bytes(seq_length, predictions, max_sequences,
                                                  vocab_size):
    rng = random.Random(seq_length)
    serialize = sequence_packing.PackedRecordSerializer(seq_length, predictions, max_sequences,
                                                        vocab_size)
    for _ in range(100):
        sequences, free, budget = [], seq_length, predictions
        for _ in range(rng.randint(1, max_sequences)):
            if free < 5:
                break
            length = rng.randint(5, min(free, 60))
            masked = sorted(rng.sample(range(1, length - 1), min(rng.randint(0, 4), budget,
                                                                 length - 2)))
            sequences.append(sequence_packing.Sequence([rng.randrange(vocab_size)
                                                        for _ in range(length)], [0] * 2
                                                       + [1] * (length - 2), masked,
                                                       [rng.randrange(vocab_size) for _ in masked],
                                                       rng.randint(0, 1)))
            free, budget = free - length, budget - len(masked)
        assert serialize(sequences) == _protobuf_bytes(sequences, seq_length, predictions,
                                                       max_sequences)


@pytest.mark.parametrize("value", [0, S // 5 + 1])
def test_bad_max_sequences_per_pack_is_refused_before_any_file(tmp_path, value):
    with pytest.raises(ValueError, match=r"--max_sequences_per_pack must be in \[1, 102\].*got "
                       + str(value)):
        cpd.create_pretraining_data(TRAIN, str(tmp_path / "out.tfrecord"), _options(value))
    assert os.listdir(tmp_path) == []


def test_tool_names_the_flag_in_one_line(tmp_path):
    result = call_entry_point("tools/create_pretraining_data.py", f"--input_file={TRAIN}",
                              f"--vocab_file={KJV_VOCAB}",
                              f"--output_file={tmp_path / 'out.tfrecord'}", f"--max_seq_length={S}",
                              "--max_sequences_per_pack=0")
    assert_user_error(result, "--max_sequences_per_pack must be in [1, 102]")
    assert os.listdir(tmp_path) == []
