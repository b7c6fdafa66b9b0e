"""Shared fixtures for the pretraining-data tests: the shipped corpus and generated examples."""

import os

import pytest

import bert_tf

CORPUS_DIR = os.path.join(os.path.dirname(bert_tf.__file__), "data", "corpus")
VOCAB = os.path.join(CORPUS_DIR, "vocab.txt")
HELDOUT = os.path.join(CORPUS_DIR, "heldout.txt.gz")
TRAIN = os.path.join(CORPUS_DIR, "train.txt.gz")


@pytest.fixture(scope="session")
def vocab():
    with open(VOCAB, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def _make_records(tmp_path_factory, name, **options):
    from bert_tf.data.records import create_pretraining_data as cpd
    from bert_tf.data.records.record_options import Options

    output = str(tmp_path_factory.mktemp(name) / "records.tfrecord")
    result = cpd.create_pretraining_data(
        HELDOUT, output, Options(vocab_file=VOCAB, dupe_factor=6, **options), num_output_shards=2)
    return result


@pytest.fixture(scope="session")
def static_records(tmp_path_factory):
    """About 3,000 instances from the held-out corpus (seq 128, 20 predictions)."""
    return _make_records(tmp_path_factory, "static")


@pytest.fixture(scope="session")
def static_wwm_records(tmp_path_factory):
    """Like `static_records`, with whole-word masking."""
    return _make_records(tmp_path_factory, "static_wwm", do_whole_word_mask=True)


@pytest.fixture(scope="session")
def static_batch(static_records):
    """All of `static_records` as one model-input dict of numpy arrays."""
    from bert_tf.data.pipelines import pretraining_dataset
    from tests.data import pretraining_stats

    dataset = pretraining_dataset.pretraining_dataset(static_records["output_files"], 512, 128, 20,
                                                      is_training=False)
    return pretraining_stats.concat(list(dataset.as_numpy_iterator()))
