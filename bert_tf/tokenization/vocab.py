"""WordPiece vocabulary files: loading, special tokens and the casing check.

A vocab file is google-research's `vocab.txt`: one token per line, the line
number is the id, continuation pieces start with `##`.
"""

import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf.errors import UserError

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)


class VocabError(UserError, ValueError):
    """A vocab file is missing, empty or lacks a token BERT needs."""


@dataclasses.dataclass(frozen=True)
class SpecialTokens:
    """Ids of BERT's special tokens in one vocab."""

    pad_id: int
    unk_id: int
    cls_id: int
    sep_id: int
    mask_id: int


def load_vocab(vocab_file):
    """Reads a `vocab.txt` into a list of tokens (index = id).

    Args:
      vocab_file: path (local or any tf.io.gfile filesystem) of a UTF-8 file, one token per line.

    Returns:
      The tokens, in file order, without line endings.

    Raises:
      VocabError: the file does not exist, is empty or not UTF-8, has a blank or duplicate
        token, or lacks one of [PAD] [UNK] [CLS] [SEP] [MASK].
    """
    vocab_file = os.fspath(vocab_file)
    if not tf.io.gfile.exists(vocab_file) or tf.io.gfile.isdir(vocab_file):
        raise VocabError(f"Vocab file {vocab_file!r} does not exist.")
    with tf.io.gfile.GFile(vocab_file, "rb") as f:
        try:
            content = f.read().decode("utf-8")
        except UnicodeDecodeError as e:
            raise VocabError(f"Vocab file {vocab_file!r} is not UTF-8: {e}.") from None
    # Only "\n" ends a token, as in google-research's reader (str.splitlines also splits on
    # U+2028 etc.).
    tokens = [line.rstrip("\r") for line in content.split("\n")]
    if tokens[-1] == "":
        tokens.pop()
    if not tokens:
        raise VocabError(f"Vocab file {vocab_file!r} is empty.")
    seen = {}
    for line_number, token in enumerate(tokens, start=1):
        if not token.strip():
            raise VocabError(f"Vocab file {vocab_file!r} line {line_number} is blank.")
        if token in seen:
            raise VocabError(
                f"Vocab file {vocab_file!r} line {line_number}: token {token!r} "
                f"already appears on line {seen[token]}.")
        seen[token] = line_number
    missing = [t for t in SPECIAL_TOKENS if t not in seen]
    if missing:
        raise VocabError(
            f"Vocab file {vocab_file!r} lacks the special token(s) "
            f"{', '.join(missing)}; BERT needs all of {' '.join(SPECIAL_TOKENS)}.")
    return tokens


def special_token_ids(vocab):
    """Returns the `SpecialTokens` ids of a vocab list from `load_vocab`."""
    index = {token: i for i, token in enumerate(vocab)}
    return SpecialTokens(index[PAD], index[UNK], index[CLS], index[SEP],
        index[MASK])


def vocab_is_cased(vocab):
    """Guesses whether a vocab was built from cased text.

    An uncased vocab was learned on lower-cased text, so apart from its
    bracketed special tokens it has no upper-case letters; a cased one has many
    ("The", "##A", ...).
    """
    capitalised = sum(
        1 for t in vocab
        if not (t.startswith("[") and t.endswith("]")) and t != t.lower())
    return capitalised >= 10


def check_case_matches_vocab(vocab, lower_case, vocab_file):
    """Warns when `lower_case` contradicts the vocab's casing.

    Same purpose as google-research's `validate_case_matches_checkpoint`, which
    recognises known checkpoint names; here the vocab itself is inspected.
    Returns True when they agree.
    """
    cased = vocab_is_cased(vocab)
    if lower_case and cased:
        logging.warning(
            "lower_case=True but vocab %s looks cased (it has capitalised "
            "tokens): capitalised tokens will never be produced. Pass "
            "lower_case=False (--do_lower_case=False) for a cased model.",
            vocab_file)
        return False
    if not lower_case and not cased:
        logging.warning(
            "lower_case=False but vocab %s looks uncased (no capitalised "
            "tokens): capitalised words will become [UNK] or odd pieces. Pass "
            "lower_case=True (--do_lower_case=True) for an uncased model.",
            vocab_file)
        return False
    return True
