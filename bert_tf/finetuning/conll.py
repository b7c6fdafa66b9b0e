"""CoNLL column files (CoNLL-2003, WNUT) for tagging; labels on each word's first WordPiece.

Files have one `word ... label` line per token (space- or tab-separated, the same number of
fields on every line; the label is the last field, or `label_column`) and a blank line
between sentences; `-DOCSTART-` lines are skipped.
Following the paper (§5.3), only a word's first piece carries its label: the other pieces,
[CLS], [SEP] and padding get label id -1 and are ignored by the loss and the metric.
"""

import dataclasses
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.errors import require_extra
from bert_tf.finetuning.table_reader import DataError, read_text, split_lines
from bert_tf.finetuning.text_batches import feature_batches

IGNORE = -1
_SEPARATORS = re.compile(r"[ \t]+")
_TOKENIZE_BATCH = 4096


@dataclasses.dataclass
class TaggedSentences:
    words: list   # list of lists of str
    tags: list    # list of lists of str, same shape
    source: str

    def __len__(self):
        return len(self.words)


def _fields(line):
    """The space- or tab-separated fields of a line (a no-break space stays inside a word)."""
    return _SEPARATORS.split(line.strip(" \t"))


def read_conll(path, label_column=-1):
    """Reads sentences of words and string tags from a CoNLL column file.

    Every token line must have as many fields as the file's first one: a line with another
    count (a chunk tag missing, an extra field) would take the wrong field as its label.

    Raises:
      DataError: missing, empty or non-UTF-8 file, a line with another number of fields than
        the first, or a `label_column` outside the line (file and line named).
    """
    sentences, tags, words, labels = [], [], [], []
    width = None
    for number, line in enumerate(split_lines(read_text(path)) + [""], start=1):
        fields = _fields(line) if line.strip(" \t") else []
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                sentences.append(words)
                tags.append(labels)
                words, labels = [], []
            continue
        if width is None:
            width = len(fields)
            if width < 2:
                raise DataError(f"{path}:{number}: expected `word ... label`, found {line!r}.")
            if not -width <= label_column < width or label_column % width == 0:
                raise DataError(f"{path}:{number}: --label_column={label_column} is not a label "
                                f"field of this {width}-field line (field 0 is the word).")
        if len(fields) != width:
            raise DataError(f"{path}:{number}: {len(fields)} fields, but the first token line "
                            f"has {width}; every line needs the same columns "
                            f"(found {line!r}).")
        words.append(fields[0])
        labels.append(fields[label_column])
    if not sentences:
        raise DataError(f"{path} has no sentences.")
    return TaggedSentences(sentences, tags, path)


def read_tfds_conll(split, data_dir, name="conll2003"):
    """Sentences of a prepared TFDS `conll2003` split (`train`, `dev`, `test`); no download.

    Returns:
      (TaggedSentences, the TFDS tag names in id order).

    Raises:
      FileNotFoundError: the dataset is not prepared under `data_dir`.
    """
    tfds = require_extra("tensorflow_datasets", extra="tfds")

    builder = tfds.builder(name, data_dir=data_dir)
    if not builder.is_prepared():
        raise FileNotFoundError(f"TFDS dataset {name} is not prepared under {data_dir}; run "
                                f"`tfds build {name} --data_dir={data_dir}` where there is "
                                "internet, or pass the CoNLL column files.")
    names = builder.info.features["ner"].feature.names
    words, tags = [], []
    for example in builder.as_dataset(split=split).as_numpy_iterator():
        words.append([token.decode("utf-8") for token in example["tokens"]])
        tags.append([names[i] for i in example["ner"]])
        if len(words[-1]) != len(tags[-1]):
            raise DataError(f"tfds:{name}/{split} sentence {len(words)}: {len(words[-1])} "
                            f"tokens but {len(tags[-1])} ner tags.")
    if not words:
        raise DataError(f"tfds:{name}/{split} has no sentences.")
    return TaggedSentences(words, tags, f"tfds:{name}/{split}"), tuple(names)


def label_names_of(sentences):
    """Sorted tag set with "O" first (when present)."""
    names = sorted({tag for sentence in sentences.tags for tag in sentence})
    return tuple(["O"] * ("O" in names) + [n for n in names if n != "O"])


def check_labels(sentences, label_names):
    """Raises DataError naming the first sentence and word whose tag is not in `label_names`."""
    known = set(label_names)
    for index, tags in enumerate(sentences.tags):
        for position, tag in enumerate(tags):
            if tag not in known:
                raise DataError(f"{sentences.source}: sentence {index + 1}, word {position + 1} "
                                f"({sentences.words[index][position]!r}): label {tag!r} is not "
                                f"in the label list {list(label_names)}.")


@dataclasses.dataclass
class TaggingFeatures:
    """One row per sentence, `S` = max_seq_length."""

    input_word_ids: np.ndarray   # int32 [N, S]
    input_mask: np.ndarray       # int32 [N, S]
    input_type_ids: np.ndarray   # int32 [N, S]
    label_ids: np.ndarray        # int32 [N, S]; IGNORE except at first pieces
    first_piece: list            # per sentence, int array of the kept words' first positions
    truncated_words: int

    def model_inputs(self):
        return {"input_word_ids": self.input_word_ids, "input_mask": self.input_mask,
                "input_type_ids": self.input_type_ids}


def convert_sentences_to_features(sentences, tokenizer, label_names, max_seq_length=128):
    """WordPiece-tokenizes every word (in-graph tokenizer, batched) and packs [CLS] … [SEP].

    Words past `max_seq_length - 2` pieces are dropped from the input and counted in
    `truncated_words` (they are predicted "O" by `predicted_tags`).
    """
    check_labels(sentences, label_names)
    flat_words = [word for sentence in sentences.words for word in sentence]
    pieces = []
    for begin in range(0, len(flat_words), _TOKENIZE_BATCH):
        ragged = tokenizer.tokenize(tf.constant(flat_words[begin:begin + _TOKENIZE_BATCH]))
        pieces += ragged.merge_dims(1, 2).to_list()
    label_id = {name: i for i, name in enumerate(label_names)}
    n = len(sentences)
    ids = np.full((n, max_seq_length), tokenizer.pad_id, np.int32)
    labels = np.full((n, max_seq_length), IGNORE, np.int32)
    mask = np.zeros((n, max_seq_length), np.int32)
    first_piece, truncated, cursor = [], 0, 0
    for row, (words, tags) in enumerate(zip(sentences.words, sentences.tags)):
        sequence, positions = [tokenizer.cls_id], []
        for word_index, tag in enumerate(tags):
            # A word that normalises to nothing (e.g. a lone control character) still needs a slot.
            word_pieces = pieces[cursor + word_index] or [tokenizer.unk_id]
            if len(sequence) + len(word_pieces) > max_seq_length - 1:
                truncated += len(tags) - word_index
                break
            positions.append(len(sequence))
            labels[row, len(sequence)] = label_id[tag]
            sequence += word_pieces
        cursor += len(words)
        sequence.append(tokenizer.sep_id)
        ids[row, :len(sequence)] = sequence
        mask[row, :len(sequence)] = 1
        first_piece.append(np.asarray(positions, np.int32))
    if truncated:
        logging.warning("%d words of %s do not fit max_seq_length=%d; they are predicted 'O'.",
                        truncated, sentences.source, max_seq_length)
    return TaggingFeatures(ids, mask, np.zeros_like(ids), labels, first_piece, truncated)


def predicted_tags(sentences, features, logits, label_names):
    """String tags per word from `[N, W, C]` logits (W ≤ S: batches packed to their longest
    hold every first piece); words cut by truncation get "O"."""
    best = np.argmax(np.asarray(logits), axis=-1)
    tags = []
    for row, words in enumerate(sentences.words):
        kept = [label_names[i] for i in best[row, features.first_piece[row]]]
        tags.append(kept + ["O"] * (len(words) - len(kept)))
    return tags


def make_dataset(features, batch_size, training=False, seed=0, skip_batches=0, padding="fixed"):
    """Batches of `(encoder inputs, {"label_ids"})`, each cut to the width `padding` gives its
    longest sentence; training data shuffled, repeated, whole batches, sorted by length unless
    `padding` is "fixed" (`text_batches.feature_batches`)."""
    return feature_batches(features.model_inputs(), {"label_ids": features.label_ids},
                           len(features.label_ids), batch_size, padding, training, seed,
                           skip_batches)


def _subset(sentences, indices):
    return TaggedSentences([sentences.words[i] for i in indices],
                           [sentences.tags[i] for i in indices], sentences.source)


def split_sentences(sentences, dev_fraction=0.2, seed=0):
    """A seeded random (train, dev) split of sentences (for corpora without a dev file)."""
    order = np.random.default_rng(seed).permutation(len(sentences))
    cut = len(order) - int(round(dev_fraction * len(order)))
    return _subset(sentences, order[:cut]), _subset(sentences, order[cut:])
