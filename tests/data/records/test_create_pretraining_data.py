"""create_pretraining_data: statistics, google-research format, NotNext buckets, determinism."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import document_reader
from bert_tf.data.pipelines import pretraining_dataset
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records import pretraining_records
from bert_tf.data.records.record_options import Options
from tests.data import pretraining_stats
from tests.data.conftest import HELDOUT, VOCAB

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam

# google-research/bert run_pretraining.py input_fn_builder's name_to_features, written out.
GOOGLE_RESEARCH_SPEC = {
    "input_ids": tf.io.FixedLenFeature([128], tf.int64),
    "input_mask": tf.io.FixedLenFeature([128], tf.int64),
    "segment_ids": tf.io.FixedLenFeature([128], tf.int64),
    "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_ids": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
    "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
}


def test_records_parse_with_google_research_spec(static_records):
    assert len(static_records["output_files"]) == 2
    records = tf.data.TFRecordDataset(static_records["output_files"])
    first = next(iter(records)).numpy()
    assert set(tf.train.Example.FromString(first).features.feature) == set(GOOGLE_RESEARCH_SPEC)
    count = 0
    for features in records.batch(1024).map(lambda r: tf.io.parse_example(r, GOOGLE_RESEARCH_SPEC)):
        count += len(features["input_ids"])
    assert count == static_records["instances"] > 2500


def test_static_statistics(static_batch):
    pretraining_stats.check_structure(static_batch, 128, 20)
    stats = pretraining_stats.statistics(static_batch)
    # google-research masks round(15% of all tokens incl. 3 specials), capped at 20: slightly over
    # 15% of the non-special pieces. Binomial sd of each share over ~50k predictions is < 0.002.
    assert 0.145 < stats["masked_fraction"] < 0.165, stats
    assert abs(stats["mask_share"] - 0.8) < 0.01 and abs(stats["random_share"] - 0.1) < 0.01, stats
    assert abs(stats["keep_share"] - 0.1) < 0.01, stats
    # One-sentence chunks always take a random B, so NotNext is a little above one half.
    assert 0.47 < stats["next_sentence_fraction"] < 0.6, stats
    lengths = static_batch["input_mask"].sum(axis=1)
    expected = np.minimum(20, np.maximum(1, np.round(lengths * 0.15)))
    np.testing.assert_array_equal(static_batch["masked_lm_weights"].sum(axis=1), expected)


def test_static_whole_word_masking(static_wwm_records, vocab):
    dataset = pretraining_dataset.pretraining_dataset(static_wwm_records["output_files"], 512, 128,
                                                      20, False)
    batch = pretraining_stats.concat(list(dataset.as_numpy_iterator()))
    pretraining_stats.check_structure(batch, 128, 20)
    assert pretraining_stats.check_whole_words(batch, vocab) > 50
    assert 0.13 < pretraining_stats.statistics(batch)["masked_fraction"] < 0.165


def test_next_sentence_b_from_other_document_of_the_same_bucket(tmp_path):
    corpus = tmp_path / "docs.txt"
    document_of = pretraining_stats.write_document_corpus(corpus, VOCAB, num_documents=150)
    options = Options(vocab_file=VOCAB, dupe_factor=3, max_seq_length=48, max_predictions_per_seq=8,
                          documents_per_bucket=50, random_seed=5)
    result = cpd.create_pretraining_data(str(corpus), str(tmp_path / "out.tfrecord"), options)
    dataset = pretraining_dataset.pretraining_dataset(result["output_files"], 1024, 48, 8, False)
    batch = pretraining_stats.concat(list(dataset.as_numpy_iterator()))
    labels, documents = pretraining_stats.check_documents(batch, document_of)
    assert len(documents) == 150
    # Each 6-sentence document ends in a one-sentence chunk, which always takes a random B.
    assert min(labels) > 0.25 * len(batch["input_mask"])
    # The bucket of each document, computed independently from its text: 150 // 50 = 3 buckets.
    bucket = [
        pretraining_records.bucket_of(f"{pretraining_records.content_hash(d.sentences)}:0", 5, 3)
        for d in document_reader.read_documents([str(corpus)])
    ]
    assert len(set(bucket)) == 3
    original = pretraining_stats.originals(batch)
    pairs = set()
    for row in np.nonzero(batch["next_sentence_labels"] == 1)[0]:
        types, mask = batch["input_type_ids"][row], batch["input_mask"][row] == 1
        doc_a = {document_of[t] for t in original[row][mask & (types == 0)]
                 if t in document_of}.pop()
        doc_b = {document_of[t] for t in original[row][mask & (types == 1)]
                 if t in document_of}.pop()
        assert bucket[doc_a] == bucket[doc_b], (doc_a, doc_b)
        pairs.add((doc_a, doc_b))
    assert len(pairs) > 300  # B is drawn from many documents of the bucket, not a few.


def test_same_seed_same_bytes_and_seed_matters(tmp_path):
    def run(name, seed):
        result = cpd.create_pretraining_data(HELDOUT, str(tmp_path / name), Options(
            vocab_file=VOCAB, dupe_factor=1, random_seed=seed), num_output_shards=2)
        return [open(p, "rb").read() for p in result["output_files"]]

    first = run("a", 7)
    assert first == run("b", 7)
    assert first != run("c", 8)
