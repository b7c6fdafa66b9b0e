"""The vocabulary and casing of a Hugging Face folder: `vocab.txt`, else `tokenizer.json`.

transformers 5 saves a BERT tokenizer as `tokenizer.json` (the `tokenizers` library's file)
and `tokenizer_config.json`, with no `vocab.txt`. From `tokenizer.json` bert_tf takes the
WordPiece vocabulary (`model.vocab`, token -> id, ids 0..N-1) and the casing of its
`BertNormalizer` (`lowercase`; `strip_accents` null follows it), or of a `Sequence` of
`Lowercase` / `StripAccents` normalizers. `tokenizer_config.json`'s `do_lower_case` must agree.
bert_tf lower-cases and strips accents together (google-research's `do_lower_case`), so a
tokenizer that does one without the other is refused rather than tokenized differently.

Example:
>>> vocab = read_folder_vocab("bert-tiny-hf5/")  # doctest: +SKIP
>>> vocab.tokens[:3], vocab.lower_case           # doctest: +SKIP
(['[PAD]', '[unused0]', '[unused1]'], True)
"""

import dataclasses
import os
import tempfile

from absl import logging

from bert_tf.errors import CheckpointError
from bert_tf.file_io import read_json_object
from bert_tf.tokenization import vocab as vocab_lib
from bert_tf.tokenization.bert_preprocessor import VOCAB_ASSET, BertPreprocessor

VOCAB_FILE = "vocab.txt"
TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"


def choose_lower_case(vocab_file, saved=None, saved_where=None, do_lower_case=None,
                      flag="do_lower_case"):
    """Whether to lower-case: a recorded value, checked against the user's; else a vocab guess.

    Every format's casing rule (model directories, Hugging Face, google-research, keras-hub,
    TF Hub, Model Garden folders).

    Args:
      vocab_file: the model's `vocab.txt`.
      saved: the recorded `do_lower_case` (model_info.json, tokenizer_config.json), or None.
      saved_where: the file it was read from, for messages.
      do_lower_case: the user's choice, or None to take the recorded one.
      flag: the flag name to cite in messages.

    Raises:
      CheckpointError: `do_lower_case` contradicts the recorded value.
      VocabError: no readable vocab where a guess is needed.
    """
    if saved is not None:
        if do_lower_case is not None and do_lower_case != saved:
            raise CheckpointError(
                f"--{flag}={do_lower_case} contradicts {saved_where} (do_lower_case: "
                f"{str(saved).lower()}): the model was trained {'uncased' if saved else 'cased'}."
                f" Drop the flag or pass --{flag}={saved}.")
        return saved
    vocab = vocab_lib.load_vocab(vocab_file)
    if do_lower_case is not None:
        vocab_lib.check_case_matches_vocab(vocab, do_lower_case, vocab_file)
        return do_lower_case
    guess = not vocab_lib.vocab_is_cased(vocab)
    logging.warning("No do_lower_case recorded%s; guessed do_lower_case=%s from the casing of "
                    "%s. Pass --%s to choose.", f" in {saved_where}" if saved_where else "",
                    guess, vocab_file, flag)
    return guess


@dataclasses.dataclass
class FolderVocab:
    """A Hugging Face folder's vocabulary.

    Attributes:
      tokens: the WordPiece tokens, index = id.
      vocab_file: the folder's `vocab.txt`, or None (the tokens came from `tokenizer.json`).
      lower_case: the recorded casing (`tokenizer_config.json`, `tokenizer.json`), or None.
      where: the file(s) the casing was read from, for messages.
    """

    tokens: list
    vocab_file: str = None
    lower_case: bool = None
    where: str = None

    def choose_lower_case(self, do_lower_case=None):
        """The casing to use: the recorded one (checked against `do_lower_case`), else the
        caller's, else a guess from `vocab.txt` (see `choose_lower_case`)."""
        if self.vocab_file is not None or self.lower_case is not None:
            return choose_lower_case(self.vocab_file, self.lower_case, self.where, do_lower_case)
        return bool(do_lower_case)  # unreachable: tokenizer.json always records its casing

    def preprocessor(self, lower_case, **kwargs):
        """A `BertPreprocessor` on this vocab (held in memory when there is no file)."""
        if self.vocab_file is not None:
            return BertPreprocessor(self.vocab_file, lower_case=lower_case, **kwargs)
        preprocessor = BertPreprocessor(None, lower_case=lower_case, **kwargs)
        with tempfile.TemporaryDirectory(prefix="bert_tf_vocab_") as folder:
            with open(os.path.join(folder, VOCAB_ASSET), "w", encoding="utf-8") as f:
                f.write("\n".join(self.tokens) + "\n")
            preprocessor.load_assets(folder)  # keeps the vocab as bytes, leaves no file
        return preprocessor


def _flag(values, key, path):
    value = values.get(key)
    if value is not None and not isinstance(value, bool):
        raise CheckpointError(f"{path}: `{key}` must be true, false or null; got {value!r}.")
    return value


def _normalizer_casing(normalizer, path):
    """(lowercase, strip_accents) of a tokenizer.json normalizer; None where it says nothing."""
    if normalizer is None:
        return False, False
    if not isinstance(normalizer, dict):
        raise CheckpointError(f"{path}: `normalizer` must be an object or null.")
    kind = normalizer.get("type")
    if kind == "BertNormalizer":
        lower = _flag(normalizer, "lowercase", path)
        lower = True if lower is None else lower  # the tokenizers library's default
        strip = _flag(normalizer, "strip_accents", path)
        return lower, lower if strip is None else strip
    if kind == "Sequence":
        lower = strip = False
        for item in normalizer.get("normalizers") or []:
            item_lower, item_strip = _normalizer_casing(item, path)
            lower, strip = lower or item_lower, strip or item_strip
        return lower, strip
    if kind == "Lowercase":
        return True, False
    if kind == "StripAccents":
        return False, True
    if kind in ("NFD", "NFC", "NFKD", "NFKC", "Strip", "Replace", "Prepend"):
        return False, False
    raise CheckpointError(f"{path}: normalizer type {kind!r} is not one bert_tf reproduces "
                          "(BertNormalizer, or a Sequence of Lowercase / StripAccents / NF*).")


def read_tokenizer_json(path):
    """(tokens, lower_case) of a `tokenizer.json` holding a WordPiece model.

    Raises:
      CheckpointError: not a WordPiece tokenizer, ids that are not 0..N-1, a `##` prefix
        other than WordPiece's, or lower-casing without accent stripping (or the reverse).
      VocabError: a vocab lacking BERT's special tokens.
    """
    values = read_json_object(path)
    model = values.get("model")
    if not isinstance(model, dict) or model.get("type") != "WordPiece":
        kind = model.get("type") if isinstance(model, dict) else None
        raise CheckpointError(f"{path}: `model.type` is {kind!r}; BERT folders hold a "
                              "WordPiece tokenizer.")
    prefix = model.get("continuing_subword_prefix", "##")
    if prefix != "##":
        raise CheckpointError(f"{path}: `model.continuing_subword_prefix` is {prefix!r}; "
                              "bert_tf's WordPiece uses `##`.")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise CheckpointError(f"{path}: `model.vocab` must be a non-empty object of token "
                              "to id.")
    tokens = [None] * len(vocab)
    for token, index in vocab.items():
        if (isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(vocab)
                or tokens[index] is not None):
            raise CheckpointError(f"{path}: `model.vocab` gives {token!r} the id {index!r}; "
                                  f"ids must be 0..{len(vocab) - 1}, each once.")
        if not token.strip() or "\n" in token:
            raise CheckpointError(f"{path}: `model.vocab` holds the token {token!r}, which a "
                                  "vocab.txt line cannot hold.")
        tokens[index] = token
    missing = [t for t in vocab_lib.SPECIAL_TOKENS if t not in vocab]
    if missing:
        raise vocab_lib.VocabError(f"{path}: the vocab lacks the special token(s) "
                                   f"{', '.join(missing)}; BERT needs all of "
                                   f"{' '.join(vocab_lib.SPECIAL_TOKENS)}.")
    lower, strip = _normalizer_casing(values.get("normalizer"), path)
    if lower != strip:
        raise CheckpointError(
            f"{path}: the normalizer {'lower-cases' if lower else 'strips accents'} without "
            f"{'stripping accents' if lower else 'lower-casing'}; bert_tf does both or neither "
            "(do_lower_case), so it would not reproduce this tokenizer.")
    return tokens, lower


def read_folder_vocab(folder):
    """The `FolderVocab` of a Hugging Face folder: `vocab.txt`, else `tokenizer.json`.

    The casing is `tokenizer_config.json`'s `do_lower_case`, else `tokenizer.json`'s
    normalizer's (the two must agree), else None (guessed later from the vocab).

    Raises:
      FileNotFoundError: neither `vocab.txt` nor `tokenizer.json`.
      CheckpointError, VocabError: an unreadable or contradicting file (named).
    """
    config_path = os.path.join(folder, TOKENIZER_CONFIG_FILE)
    config = read_json_object(config_path) if os.path.isfile(config_path) else {}
    recorded = _flag(config, "do_lower_case", config_path)
    strip = _flag(config, "strip_accents", config_path)
    if recorded is not None and strip is not None and strip != recorded:
        raise CheckpointError(f"{config_path}: `strip_accents` is {strip} but `do_lower_case` "
                              f"is {recorded}; bert_tf does both or neither.")
    vocab_file = os.path.join(folder, VOCAB_FILE)
    json_path = os.path.join(folder, TOKENIZER_FILE)
    tokens = lower_case = None
    if os.path.isfile(json_path):
        tokens, lower_case = read_tokenizer_json(json_path)
        if recorded is not None and recorded != lower_case:
            raise CheckpointError(
                f"{config_path}: `do_lower_case` is {recorded}, but the normalizer of "
                f"{json_path} {'lower-cases' if lower_case else 'keeps the case'}; fix one of "
                "them.")
    where = config_path if recorded is not None else json_path
    recorded = lower_case if recorded is None else recorded
    if os.path.isfile(vocab_file):
        return FolderVocab(vocab_lib.load_vocab(vocab_file), vocab_file, recorded, where)
    if tokens is None:
        raise FileNotFoundError(f"{folder} has neither {VOCAB_FILE} nor {TOKENIZER_FILE}: the "
                                "WordPiece vocabulary is needed to tokenize text.")
    return FolderVocab(tokens, None, recorded, where)


def write_vocab(tokens, path):
    """Writes `tokens` as a `vocab.txt` (one per line, line number = id)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
