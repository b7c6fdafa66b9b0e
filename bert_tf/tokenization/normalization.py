"""In-graph BERT text normalisation and word splitting, identical to the reference.

The reference is Hugging Face `BertTokenizerFast` (the `tokenizers` crate's `BertNormalizer`,
`BertPreTokenizer` and added-token matcher), which reproduces google-research's `BasicTokenizer`.
tensorflow-text's own normalisers (`FastBertNormalize`, `case_fold_utf8`) differ from it: NFKC
case folding maps "ß" -> "ss", "ﬁ" -> "fi", full-width "Ａ" -> "a" and a final "ς" -> "σ",
where the reference uses per-character `to_lowercase` (Python's `str.lower()` minus the
final-sigma rule); and they keep characters that the reference deletes. So the steps are done
here with RE2 and ICU ops, in the reference's order:

1. `to_valid_utf8`: invalid UTF-8 and NUL become U+0001 (deleted below), offsets unchanged.
2. Special tokens typed in the raw text ("[CLS]", ...) are kept whole, as the reference matches
   them before normalising: `mark_special_tokens` (whole strings) / `mark_special_words`.
3. `normalize`: delete control (Cc, except \t \n \r), format (Cf), private-use (Co) characters
   and U+FFFD (deletion joins the text around them: "wo\u200brld" -> "world"); with
   `lower_case`, strip accents (NFD, drop nonspacing marks) and lower-case.
4. Split on whitespace (dropped), punctuation (ASCII punctuation and symbols, Unicode P*) and
   CJK ideographs (each its own word). `BertTokenizer.tokenize` leaves this to
   FastWordpieceTokenizer's end-to-end mode, whose split is the reference's; `split_words`
   does it with RE2 on the raw text, for byte offsets.
"""

import tensorflow as tf
import tensorflow_text as text

from bert_tf.tokenization import vocab as vocab_lib

# Whitespace: the reference's `char::is_whitespace` minus the Cc characters (deleted as controls
# before whitespace is looked at), i.e. \t \n \r and Unicode separators (Zs, Zl, Zp).
_WHITESPACE = r"[\t\n\r\p{Z}]"
# ASCII punctuation (incl. symbols such as $ + < = > ^ ` | ~) or Unicode P*.
_PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"
# The reference's CJK Unified Ideograph blocks.
_CJK = (r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}"
        r"\x{2A700}-\x{2B73F}\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}"
        r"\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]")
# Characters that become punctuation once accents are stripped (NFD minus nonspacing marks):
# GREEK VARIA -> "`", NOT EQUAL TO -> "=", NOT LESS-THAN -> "<", NOT GREATER-THAN -> ">". The
# reference splits after normalising, so `split_words` (which splits before) must split them
# in lower-case mode too. (Found by scanning all of Unicode.)
_PUNCTUATION_AFTER_NFD = r"[\x{1FEF}\x{2260}\x{226E}\x{226F}]"
# Everything the reference deletes: control (Cc) characters except \t \n \r, format (Cf),
# private-use (Co) and surrogate (Cs) characters, and U+FFFD; unassigned code points (Cn) stay.
# U+E000 and U+E001 (private use) are kept: `to_valid_utf8` removes them from the input, then
# they mark special tokens.
_DELETED = (r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cf}\p{Cs}\x{E002}-\x{F8FF}"
            r"\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}\x{FFFD}]")
_DELETED_OR_MARK = _DELETED + r"|\p{Mn}"

_SPECIAL_NAMES = r"\[(PAD|UNK|CLS|SEP|MASK)\]"
# Placeholder words for typed special tokens are PLACEHOLDER_START + name + U+E001.
PLACEHOLDER_START = "\ue000"
# Strings that `to_valid_utf8` can pass as they are: valid UTF-8 without NUL, U+E000, U+E001.
_CLEAN_UTF8 = r"[\x01-\x{D7FF}\x{E002}-\x{10FFFF}]*"

# The reference's WordPiece `max_input_chars_per_word`: longer words -> [UNK].
MAX_CHARS_PER_WORD = 100


def _split_patterns(lower_case):
    kept = [_SPECIAL_NAMES.replace("(", "(?:"), _PUNCTUATION, _CJK]
    if lower_case:
        kept.append(_PUNCTUATION_AFTER_NFD)
    keep_pattern = "|".join(kept)
    return f"{keep_pattern}|{_WHITESPACE}", keep_pattern


def _repair_utf8(strings):
    strings = tf.strings.unicode_transcode(
        strings, input_encoding="UTF-8", output_encoding="UTF-8", errors="replace",
        replacement_char=1)
    return tf.strings.regex_replace(strings, r"[\x00\x{E000}\x{E001}]", "\x01")


def to_valid_utf8(strings):
    """Makes strings safe to normalise and split, without moving any byte offset.

    Invalid UTF-8 becomes U+0001 (the reference only sees Python `str`, where bytes decoded with
    `errors="replace"` become U+FFFD, which it deletes); NUL becomes U+0001 because
    `regex_split_with_offsets` and ICU stop reading at NUL; U+E000 and U+E001 (private use,
    deleted by the reference) become U+0001 to keep them free for `mark_special_tokens`.
    Normalisation deletes U+0001 like any control character. The transcoding pass is costly, so
    it runs only for batches that need it.
    """
    clean = tf.reduce_all(tf.strings.regex_full_match(strings, _CLEAN_UTF8))
    return tf.cond(clean, lambda: strings, lambda: _repair_utf8(strings))


def mark_special_tokens(strings):
    """Turns typed special tokens into placeholder words: "[CLS]" -> " \ue000CLS\ue001 ".

    The placeholders survive normalisation (lower-cased in lower-case mode) and are split off as
    words of their own; `placeholder_tokens` lists them for the WordPiece vocab.
    """
    return tf.strings.regex_replace(strings, _SPECIAL_NAMES, " \ue000\\1\ue001 ")


def placeholder_tokens(lower_case):
    """The words `mark_special_tokens` + `normalize` make of SPECIAL_TOKENS, in that order."""
    names = [t[1:-1] for t in vocab_lib.SPECIAL_TOKENS]
    return [f"{PLACEHOLDER_START}{n.lower() if lower_case else n}\ue001" for n in names]


def normalize(strings, lower_case):
    """Normalises strings (whole lines or words) as the reference does (step 3 above)."""
    if not lower_case:
        return tf.strings.regex_replace(strings, _DELETED, "")
    normalized = text.normalize_utf8(strings, "NFD")
    normalized = tf.strings.regex_replace(normalized, _DELETED_OR_MARK, "")
    # ICU lower-cases a word-final capital sigma to "ς"; the reference maps each character on
    # its own (always "σ").
    normalized = tf.strings.regex_replace(normalized, "\u03a3", "\u03c3")
    return tf.strings.lower(normalized, encoding="utf-8")


def split_words(strings, lower_case):
    """Splits raw strings into the reference's words, before normalisation.

    Args:
      strings: tf.string `[B]`, from `to_valid_utf8`.
      lower_case: whether words will be lower-cased (then also splits at
        `_PUNCTUATION_AFTER_NFD`). Control characters are not split points: `normalize`
        deletes them, joining their neighbours, as the reference does.

    Returns:
      `(words, starts, ends)`: ragged `[B, (words)]` tf.string and int64 byte offsets of each
      word in its input string.
    """
    delim, keep = _split_patterns(lower_case)
    return text.regex_split_with_offsets(strings, delim, keep)


def mark_special_words(words):
    """`mark_special_tokens` for single words from `split_words` (no spaces added)."""
    return tf.strings.regex_replace(words, "^" + _SPECIAL_NAMES + "$", "\ue000\\1\ue001")


def normalized_words(strings, lower_case):
    """Splits and normalises strings into the words WordPiece sees, with their input spans.

    Args:
      strings: tf.string `[B]`, any bytes.
      lower_case: lower-case and strip accents.

    Returns:
      `(words, raw, starts, ends)`, each ragged `[B, (words)]`: normalised words (special tokens
      as placeholders, see `mark_special_tokens`), the raw words, and their int64 byte offsets in
      the input. Words that normalise to nothing (only controls or accents) are dropped, as the
      reference drops them.
    """
    raw, starts, ends = split_words(to_valid_utf8(strings), lower_case)
    words = raw.with_flat_values(normalize(mark_special_words(raw.flat_values), lower_case))
    keep = tf.strings.length(words) > 0
    return tuple(tf.ragged.boolean_mask(t, keep) for t in (words, raw, starts, ends))
