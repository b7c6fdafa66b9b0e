"""Dynamic pipeline: statistics, whole words, documents, equivalence with static, resuming."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import document_reader
from bert_tf.data.pipelines.dynamic_pretraining import dynamic_pretraining_dataset
from tests.data import pretraining_stats
from tests.data.conftest import HELDOUT, VOCAB


def _dataset(path=HELDOUT, batch_size=128, seq_length=128, max_predictions=20, **kwargs):
    kwargs.setdefault("seed", 1)
    return dynamic_pretraining_dataset(path, VOCAB, True, batch_size, seq_length, max_predictions,
                                       **kwargs)


@pytest.fixture(scope="module")
def dynamic_batch():
    """1,024 examples from the held-out corpus (seq 128, 20 predictions)."""
    return pretraining_stats.concat(list(_dataset().take(8).as_numpy_iterator()))


def test_dynamic_structure_and_statistics(dynamic_batch):
    pretraining_stats.check_structure(dynamic_batch, 128, 20)
    stats = pretraining_stats.statistics(dynamic_batch)
    assert stats["num_examples"] == 1024 and stats["ids_in_vocab"]
    # Selection is ceil(15% of non-special pieces), capped at 20. Shares: binomial sd < 0.004 over
    # ~18k.
    assert 0.145 < stats["masked_fraction"] < 0.165, stats
    assert abs(stats["mask_share"] - 0.8) < 0.015, stats
    assert abs(stats["random_share"] - 0.1) < 0.012, stats
    assert abs(stats["keep_share"] - 0.1) < 0.012, stats
    # 50% plus one-sentence chunks, minus partners from the same document (forced IsNext); sd 0.016.
    assert 0.45 < stats["next_sentence_fraction"] < 0.6, stats


def test_dynamic_matches_static(dynamic_batch, static_batch):
    dynamic = pretraining_stats.statistics(dynamic_batch)
    static = pretraining_stats.statistics(static_batch)
    for key, tolerance in (("masked_fraction", 0.01), ("mask_share", 0.02), ("random_share", 0.015),
                           ("keep_share", 0.015), ("next_sentence_fraction", 0.08)):
        assert abs(dynamic[key] - static[key]) < tolerance, (key, dynamic[key], static[key])
    assert abs(dynamic["mean_length"] / static["mean_length"] - 1) < 0.1, (dynamic, static)


def test_dynamic_whole_word_masking(vocab):
    batches = _dataset(whole_word_mask=True).take(2).as_numpy_iterator()
    batch = pretraining_stats.concat(list(batches))
    pretraining_stats.check_structure(batch, 128, 20)
    assert pretraining_stats.check_whole_words(batch, vocab) > 25
    assert 0.135 < pretraining_stats.statistics(batch)["masked_fraction"] < 0.165


def test_dynamic_next_sentence_from_other_document(tmp_path):
    document_of = pretraining_stats.write_document_corpus(tmp_path / "docs.txt", VOCAB)
    batch = pretraining_stats.concat(list(_dataset(str(tmp_path / "docs.txt"), 64, 48, 8).take(4)))
    pretraining_stats.check_structure(batch, 48, 8)
    labels, documents = pretraining_stats.check_documents(batch, document_of)
    assert min(labels) > 0.25 * sum(labels) and len(documents) == 40


def test_dynamic_input_context_shards_documents(tmp_path):
    document_of = pretraining_stats.write_document_corpus(tmp_path / "docs.txt", VOCAB)
    documents = []
    for pipeline_id in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline_id,
                                             num_replicas_in_sync=2)
        batch = pretraining_stats.concat(list(_dataset(str(tmp_path / "docs.txt"), 32, 48, 8,
                                                       input_context=context,
                                                       use_next_sentence=False).take(4)))
        assert batch["input_word_ids"].shape == (64, 48)  # 4 batches of the per-replica 16.
        original = pretraining_stats.originals(batch)
        documents.append({document_of[t] for t in original.ravel() if t in document_of})
    # Pipeline i reads only documents with key % 2 == i (the shuffle buffer decides which of them
    # come first).
    assert documents[0] <= set(range(0, 40, 2)) and documents[1] <= set(range(1, 40, 2))
    assert min(len(documents[0]), len(documents[1])) >= 10


def test_dynamic_deterministic_and_skip():
    def batches(seed=1, skip=0):
        dataset = _dataset(batch_size=16, seed=seed, skip_batches=skip)
        return np.stack([b["input_word_ids"] for b in dataset.take(4 - skip)])

    # A separate pipeline that skips 2 batches yields exactly batches 2 and 3: same seed, same
    # order.
    full = batches()
    np.testing.assert_array_equal(full[2:], batches(skip=2))
    assert not np.array_equal(full, batches(seed=2))


def test_dynamic_mlm_only():
    batch = pretraining_stats.concat(list(_dataset(batch_size=64, use_next_sentence=False).take(2)))
    pretraining_stats.check_structure(batch, 128, 20, use_next_sentence=False)
    assert not batch["next_sentence_labels"].any()
    assert 0.145 < pretraining_stats.statistics(batch)["masked_fraction"] < 0.165


def test_dynamic_missing_files():
    with pytest.raises(document_reader.InputError, match="matches no file"):
        _dataset("/nonexistent/corpus-*.txt")


def test_dynamic_skips_lines_that_are_not_utf8(tmp_path, caplog):
    import logging

    lines = [b"alpha beta gamma.", b"\xff\xfe zzzz broken", b"delta epsilon.", b"",
             b"another document here.", b"with a second sentence."]
    (tmp_path / "mixed.txt").write_bytes(b"\n".join(lines) + b"\n")
    with caplog.at_level(logging.WARNING):
        batch = next(_dataset(str(tmp_path / "mixed.txt"), 8, 32, 5,
                              use_next_sentence=False).as_numpy_iterator())
    assert "mixed.txt:2: skipping line that is not UTF-8" in caplog.text
    vocab = open(VOCAB, encoding="utf-8").read().split("\n")
    words = {vocab[t] for t in pretraining_stats.originals(batch).ravel()}
    assert {"alpha", "delta", "another"} <= words and "zzzz" not in words and "##zz" not in words


def test_dynamic_training_reads_and_tokenizes_the_text_once(tmp_path):
    # Later epochs come from the tokenized documents kept by the first: a pipeline whose file
    # is rewritten after its first batch yields exactly the batches of one left alone (about
    # 6 batches an epoch here, 20 taken), and the masks are still drawn anew every epoch.
    kept, rewritten = tmp_path / "kept.txt", tmp_path / "rewritten.txt"
    for path in (kept, rewritten):
        pretraining_stats.write_document_corpus(path, VOCAB)
    reference = [b["input_word_ids"]
                 for b in _dataset(str(kept), 8, 48, 8).take(20).as_numpy_iterator()]
    iterator = _dataset(str(rewritten), 8, 48, 8).as_numpy_iterator()
    batches = [next(iterator)["input_word_ids"]]
    pretraining_stats.write_document_corpus(rewritten, VOCAB, words=5)  # other words, shorter
    batches += [next(iterator)["input_word_ids"] for _ in range(19)]
    np.testing.assert_array_equal(np.stack(batches), np.stack(reference))
    first_epoch = {tuple(row) for batch in reference[:5] for row in batch}
    assert not first_epoch & {tuple(row) for batch in reference[-5:] for row in batch}


@pytest.mark.parametrize("is_training", [True, False])
def test_dynamic_pipeline_runs_without_the_autotuning_model(is_training):
    # With tf.data's autotuning model thread, deleting an iterator that had yielded a few
    # hundred batches waited 10-20 s (the end of every demo run stood idle that long); the
    # pipeline opts out for training and held-out batches alike (WORKSPACE, "Text pipeline").
    assert _dataset(is_training=is_training).options().autotune.enabled is False
