"""Checks and statistics over pretraining batches (model-input dicts of numpy arrays)."""

import random

import numpy as np

CLS, SEP, MASK = 101, 102, 103  # In the shipped uncased vocab.


def concat(batches):
    """Concatenates a list of batch dicts (tensors or arrays) into one dict of arrays."""
    return {k: np.concatenate([np.asarray(b[k]) for b in batches]) for k in batches[0]}


def originals(batch):
    """input_word_ids with the masked positions restored to masked_lm_ids."""
    ids = batch["input_word_ids"].copy()
    rows, slots = np.nonzero(batch["masked_lm_weights"] > 0)
    ids[rows, batch["masked_lm_positions"][rows, slots]] = batch["masked_lm_ids"][rows, slots]
    return ids


def check_structure(batch, seq_length, max_predictions, use_next_sentence=True):
    """Asserts [CLS]/[SEP] placement, segment ids, mask, padding; specials never masked."""
    ids, original = batch["input_word_ids"], originals(batch)
    assert ids.shape[1] == seq_length and batch["masked_lm_positions"].shape[1] == max_predictions
    for row in range(ids.shape[0]):
        length = int(batch["input_mask"][row].sum())
        assert 5 <= length <= seq_length if use_next_sentence else 3 <= length <= seq_length
        assert np.all(batch["input_mask"][row, :length] == 1)
        assert np.all(batch["input_mask"][row, length:] == 0)
        assert np.all(ids[row, length:] == 0)
        seps = np.nonzero(original[row, :length] == SEP)[0]
        assert original[row, 0] == CLS and np.count_nonzero(original[row, :length] == CLS) == 1
        types = batch["input_type_ids"][row, :length]
        if use_next_sentence:
            assert len(seps) == 2 and seps[1] == length - 1, original[row, :length]
            assert np.all(types[:seps[0] + 1] == 0) and np.all(types[seps[0] + 1:] == 1)
        else:
            assert list(seps) == [length - 1] and np.all(types == 0)
        weights = batch["masked_lm_weights"][row]
        count = int(weights.sum())
        assert np.all(weights[:count] == 1) and np.all(weights[count:] == 0)
        positions = batch["masked_lm_positions"][row, :count]
        assert len(set(positions.tolist())) == count
        assert np.all((positions > 0) & (positions < length - 1))
        assert not np.isin(original[row, positions], [CLS, SEP]).any(), "a special token was masked"


def statistics(batch, vocab_size=30522):
    """Masked fraction of non-special pieces, 80/10/10 shares, NotNext fraction, mean length."""
    lengths = batch["input_mask"].sum(axis=1)
    num_special = 3 if batch["input_type_ids"].max() > 0 else 2
    masked = batch["masked_lm_weights"] > 0
    rows, slots = np.nonzero(masked)
    now = batch["input_word_ids"][rows, batch["masked_lm_positions"][rows, slots]]
    before = batch["masked_lm_ids"][rows, slots]
    return {
        "masked_fraction": masked.sum() / (lengths.sum() - num_special * len(lengths)),
        "mask_share": np.mean(now == MASK),
        "keep_share": np.mean(now == before),
        "random_share": np.mean((now != MASK) & (now != before)),
        "next_sentence_fraction": batch["next_sentence_labels"].mean(),
        "mean_length": lengths.mean(),
        "num_examples": len(lengths),
        "ids_in_vocab": bool(
            np.all((batch["input_word_ids"] >= 0) & (batch["input_word_ids"] < vocab_size))
        ),
    }


def word_groups(original_row, length, vocab):
    """Lists of positions forming whole words (a '##' piece joins the previous word)."""
    groups = []
    for position in range(1, length):
        token = vocab[original_row[position]]
        previous = original_row[position - 1]
        if token.startswith("##") and groups and previous not in (CLS, SEP):
            groups[-1].append(position)
        elif original_row[position] not in (CLS, SEP):
            groups.append([position])
    return groups


def check_whole_words(batch, vocab):
    """Asserts every word is masked entirely or not at all; returns #multi-piece words masked."""
    original = originals(batch)
    multi_piece_masked = 0
    for row in range(original.shape[0]):
        length = int(batch["input_mask"][row].sum())
        count = int(batch["masked_lm_weights"][row].sum())
        masked = set(batch["masked_lm_positions"][row, :count].tolist())
        for group in word_groups(original[row], length, vocab):
            hits = sum(p in masked for p in group)
            assert hits in (0, len(group)), (
                f"row {row}: word {group} partly masked ({hits} of {len(group)})")
            multi_piece_masked += hits > 1
    return multi_piece_masked


def write_document_corpus(path, vocab_file, num_documents=40, sentences=6, words=8):
    """Documents with disjoint vocabularies, so that a token tells its document."""
    rng = random.Random(0)
    with open(vocab_file, encoding="utf-8") as f:
        vocab = [line.strip() for line in f]
    # Plain lower-case ASCII whole words tokenize to themselves.
    plain = [w for w in vocab[2000:] if w.isascii() and w.isalpha() and w.islower()]
    words_by_doc = [plain[40 * d:40 * d + 40] for d in range(num_documents)]
    with open(path, "w") as f:
        for pool in words_by_doc:
            for _ in range(sentences):
                f.write(" ".join(rng.choice(pool) for _ in range(words)) + ".\n")
            f.write("\n")
    return {vocab.index(w): d for d, ws in enumerate(words_by_doc) for w in ws}


def check_documents(batch, document_of):
    """Asserts A is from one document and B from another iff NotNext; returns label counts and
    documents."""
    original = originals(batch)
    labels, documents = [0, 0], set()
    for row in range(len(original)):
        types, mask = batch["input_type_ids"][row], batch["input_mask"][row] == 1
        docs_a = {document_of[t] for t in original[row][mask & (types == 0)] if t in document_of}
        docs_b = {document_of[t] for t in original[row][mask & (types == 1)] if t in document_of}
        assert len(docs_a) == 1 and len(docs_b) == 1, (docs_a, docs_b)
        is_random_next = batch["next_sentence_labels"][row] == 1
        assert (docs_a != docs_b) == is_random_next, (docs_a, docs_b, is_random_next)
        labels[int(is_random_next)] += 1
        documents |= docs_a
    return labels, documents
