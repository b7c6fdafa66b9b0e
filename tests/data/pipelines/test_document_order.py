"""Dynamic pipeline order: documents shuffled across the corpus, NotNext B from anywhere in the
window."""

import random

import numpy as np
import pytest

from bert_tf.data import document_reader
from bert_tf.data.pipelines.dynamic_pretraining import dynamic_pretraining_dataset
from tests.data import pretraining_stats
from tests.data.conftest import VOCAB

NUM_DOCUMENTS, SEQ_LENGTH, BATCH = 1200, 32, 16


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """1,200 short documents in file order, each with its own 10 words: (path, token id ->
    document)."""
    with open(VOCAB, encoding="utf-8") as f:
        vocab = [line.strip() for line in f]
    # One piece each.
    plain = [w for w in vocab[2000:] if w.isascii() and w.isalpha() and w.islower()]
    rng = random.Random(0)
    path = tmp_path_factory.mktemp("ordered") / "docs.txt"
    with open(path, "w") as f:
        for d in range(NUM_DOCUMENTS):
            pool = plain[10 * d:10 * d + 10]
            f.write("".join(" ".join(rng.choice(pool) for _ in range(6)) + ".\n" for _ in range(3))
                    + "\n")
    return str(path), {vocab.index(w): d for d in range(NUM_DOCUMENTS)
                       for w in plain[10 * d:10 * d + 10]}


def _examples(path, num_batches, **kwargs):
    dataset = dynamic_pretraining_dataset(path, VOCAB, True, BATCH, SEQ_LENGTH, 5, seed=3, **kwargs)
    return pretraining_stats.concat(list(dataset.take(num_batches).as_numpy_iterator()))


def _segment_documents(batch, document_of, segment):
    """The document of segment A (0) or B (1) of each example."""
    original, documents = pretraining_stats.originals(batch), []
    for row in range(len(original)):
        mask = (batch["input_mask"][row] == 1) & (batch["input_type_ids"][row] == segment)
        docs = {document_of[t] for t in original[row][mask] if t in document_of}
        assert len(docs) == 1, docs
        documents.append(docs.pop())
    return np.array(documents)


def _spread(documents, parts=6):
    """How many of `parts` equal stretches of the file the documents fall in."""
    return len(set((documents * parts // NUM_DOCUMENTS).tolist()))


def test_every_document_once_per_epoch(corpus):
    path, document_of = corpus
    # Each document is one chunk of 21 pieces (MLM only): an epoch is 1,200 examples.
    batch = _examples(path, NUM_DOCUMENTS // BATCH, use_next_sentence=False)
    documents = _segment_documents(batch, document_of, 0)
    assert len(set(documents)) == len(documents) == NUM_DOCUMENTS // BATCH * BATCH


def test_first_examples_come_from_the_whole_file(corpus):
    path, document_of = corpus
    # The first 64 of ~1,200: 5%.
    documents = _segment_documents(_examples(path, 4), document_of, 0)
    # Uniform draws miss one sixth of the file with probability 6 * (5/6)^64 < 1e-4; reading in
    # file order through a buffer would cover only its start.
    assert _spread(documents) == 6, sorted(documents)
    assert abs(np.mean(documents) / NUM_DOCUMENTS - 0.5) < 0.15  # Mean of 64 uniform: sd 0.036.


def test_not_next_partners_come_from_the_whole_window(corpus):
    path, document_of = corpus
    batch = _examples(path, 8)
    pretraining_stats.check_structure(batch, SEQ_LENGTH, 5)
    a, b = _segment_documents(batch, document_of, 0), _segment_documents(batch, document_of, 1)
    not_next = batch["next_sentence_labels"] == 1
    assert 0.4 < not_next.mean() < 0.6 and np.all((a != b) == not_next)
    # Partners are uniform over the other documents: far from A (median |A - B| of uniform pairs
    # is 0.29 of the file; a neighbouring chunk would sit next to A) and from every part of it.
    distance = np.abs(a - b)[not_next]
    assert np.median(distance) > 0.15 * NUM_DOCUMENTS, np.median(distance)
    assert _spread(b[not_next]) == 6


def test_small_window_keeps_partners_inside_it(corpus):
    path, document_of = corpus
    # About 120 documents' worth of text per window (each document is ~120 bytes).
    batch = _examples(path, 4, max_window_bytes=120 * 120)
    a, b = _segment_documents(batch, document_of, 0), _segment_documents(batch, document_of, 1)
    not_next = batch["next_sentence_labels"] == 1
    # The first window is drawn by a 120-document buffer from the file stream: its documents,
    # and so the partners, lie near the start of the file.
    assert b[not_next].max() < 400 and a.max() < 400


def test_blank_lines_only(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("\n  \n\t\n" * 100)
    with pytest.raises(document_reader.InputError, match="blank.txt: no documents"):
        _examples(str(path), 1)


def test_one_document_cannot_pair(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("Only one document.\nWith two sentences.\n")
    with pytest.raises(document_reader.InputError, match="gets 1 of the 1 documents .* needs 2"):
        _examples(str(path), 1)
    # MLM only: fine.
    assert len(_examples(str(path), 1, use_next_sentence=False)["input_word_ids"]) == BATCH
