"""Static pipeline on damaged record files: errors name the file and the record, before any
batch."""

import pytest

from bert_tf.data.pipelines import pretraining_dataset as pd
from tests.data.pipelines.test_pretraining_dataset import P, S, _google_research_record, _write


def _records(tmp_path, name="data.tfrecord", bad_at=None, drop=None, num_records=3000):
    records = [_google_research_record(i % 50, drop=drop if i == bad_at else None)[0]
               for i in range(num_records)]
    return _write(tmp_path / name, records)


def _dataset(path, **kwargs):
    return pd.pretraining_dataset(path, 8, S, P, is_training=True, **kwargs)


def test_truncated_file_names_file_and_record(tmp_path):
    path = _records(tmp_path)
    data = open(path, "rb").read()
    record_bytes = len(data) // 3000
    # Cut inside record 2500.
    open(path, "wb").write(data[:2500 * record_bytes + record_bytes // 2])
    with pytest.raises(pd.RecordFormatError,
                       match=r"data.tfrecord: cannot read record 2500 \(file truncated"):
        _dataset(path)


def test_corrupt_byte_names_file_and_record(tmp_path):
    path = _records(tmp_path)
    data = bytearray(open(path, "rb").read())
    record_bytes = len(data) // 3000
    data[1700 * record_bytes + record_bytes // 2] ^= 0xFF  # A byte inside record 1700's payload.
    open(path, "wb").write(bytes(data))
    with pytest.raises(pd.RecordFormatError, match=r"data.tfrecord: cannot read record 1700 "):
        _dataset(path)


def test_record_missing_a_feature_deep_in_the_file(tmp_path):
    good = _records(tmp_path, "a.tfrecord", num_records=10)
    bad = _records(tmp_path, "b.tfrecord", bad_at=2345, drop="masked_lm_weights")
    with pytest.raises(pd.RecordFormatError,
                       match=r"b.tfrecord: record 2345 has no feature 'masked_lm_weights'"):
        _dataset([good, bad])


def test_ids_outside_the_vocabulary(tmp_path):
    path = _records(tmp_path, num_records=40)  # Ids up to 2049 (record 49 would hold 2049).
    _dataset(path, vocab_size=2100)
    with pytest.raises(pd.RecordFormatError, match=r"data.tfrecord: record 30: feature 'input_ids' "
                       r"holds an id " r"outside the vocabulary \[0, 2030\)"):
        _dataset(path, vocab_size=2030)


def test_empty_file(tmp_path):
    path = _write(tmp_path / "empty.tfrecord", [])
    with pytest.raises(pd.RecordFormatError, match="empty.tfrecord: file has no records"):
        _dataset(path)
