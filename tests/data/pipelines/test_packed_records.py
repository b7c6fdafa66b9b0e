"""The static pipeline on packed records (`--max_sequences_per_pack`): batches and bad files."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pipelines import pretraining_dataset as pd
from bert_tf.data.records.sequence_packing import PackedRecordSerializer, Sequence
from tests.data.pipelines.test_pretraining_dataset import _google_research_record, _write

S, P, K = 16, 4, 3


def _packed_record(seq_length=S):
    serialize = PackedRecordSerializer(seq_length, P, K, vocab_size=3000)
    return serialize([Sequence([101, 1005, 102, 1006, 102], [0, 0, 0, 1, 1], [1], [1001], 1),
                      Sequence([101, 1007, 1008, 102, 1009, 102], [0, 0, 0, 0, 1, 1], [2, 4],
                               [1002, 1003], 0)])


def test_packed_record_to_model_inputs(tmp_path):
    path = _write(tmp_path / "packed.tfrecord", [_packed_record()] * 2)
    batch = next(iter(pd.pretraining_dataset(path, 2, S, P, is_training=False)))
    assert {k: (v.dtype, tuple(v.shape)) for k, v in batch.items()} == {
        "input_word_ids": (tf.int32, (2, S)),
        "input_mask": (tf.int32, (2, S)),
        "input_type_ids": (tf.int32, (2, S)),
        "input_position_ids": (tf.int32, (2, S)),
        "masked_lm_positions": (tf.int32, (2, P)),
        "masked_lm_ids": (tf.int32, (2, P)),
        "masked_lm_weights": (tf.float32, (2, P)),
        "next_sentence_labels": (tf.int32, (2, K)),
        "next_sentence_positions": (tf.int32, (2, K)),
        "next_sentence_weights": (tf.float32, (2, K)),
    }
    np.testing.assert_array_equal(batch["input_mask"][0], [1] * 5 + [2] * 6 + [0] * 5)
    np.testing.assert_array_equal(batch["input_position_ids"][0], list(range(5)) + list(range(6))
                                  + [0] * 5)
    np.testing.assert_array_equal(batch["masked_lm_positions"][0], [1, 7, 9, 0])
    np.testing.assert_array_equal(batch["next_sentence_positions"][0], [0, 5, 0])
    np.testing.assert_array_equal(batch["next_sentence_labels"][0], [1, 0, 0])
    np.testing.assert_array_equal(batch["next_sentence_weights"][0], [1, 1, 0])


def test_packed_records_of_another_length_name_the_flag(tmp_path):
    path = _write(tmp_path / "packed.tfrecord", [_packed_record(seq_length=32)])
    with pytest.raises(pd.RecordFormatError, match= "packed.tfrecord: record 0: feature "
                       "'input_ids' has 32 values, expected --max_seq_length=16"):
        pd.pretraining_dataset(path, 2, S, P, is_training=False)


def test_packed_and_unpacked_files_do_not_mix(tmp_path):
    packed = _write(tmp_path / "packed.tfrecord", [_packed_record()])
    unpacked = _write(tmp_path / "unpacked.tfrecord", [_google_research_record(0)[0]])
    with pytest.raises(pd.RecordFormatError, match= "packed.tfrecord holds rows of 3 sequences but "
                       ".*unpacked.tfrecord one sequence per record .*--max_sequences_per_pack"):
        pd.pretraining_dataset([packed, unpacked], 2, S, P, is_training=False)
