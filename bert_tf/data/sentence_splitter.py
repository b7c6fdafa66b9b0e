"""Rule-based English sentence splitter for preparing pretraining text.

`create_pretraining_data` expects one sentence per line with blank lines between
documents (google-research/bert's input format). Raw text usually comes as
paragraphs, so `tools/prepare_corpus.py` runs it through `split_sentences`.

The rules, in order:
1. A candidate boundary is one or more of `.`, `?`, `!` (an ellipsis counts as
   one), optionally followed by closing quotes or brackets, then whitespace.
2. The next sentence must start with an upper-case letter or a digit, optionally
   after opening quotes or brackets; `"Stop!" she cried.` stays one sentence.
3. A period does not end a sentence after a known abbreviation (`Mr.`, `e.g.`,
   `Fig.`), after a single-letter initial (`J. S. Bach`), or inside a number
   (`3.14` never has whitespace after the period, so rule 1 already keeps it).

Hand-written because neither TensorFlow nor tensorflow-text ships an English
sentence breaker for plain text (`tf_text.StateBasedSentenceBreaker` only splits
on terminal punctuation and breaks `Mr. Smith` apart).
"""

import re

# Abbreviations after which a period does not end a sentence (lower case, no
# trailing period). "etc." is left out on purpose: it ends sentences as often as not.
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt vs e.g i.e cf al approx dept est fig figs
    no nos vol vols ed eds pp p inc ltd co corp gen gov col capt lt sgt rev hon
    jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k a.m p.m ph.d""".split()
)

_BOUNDARY = re.compile(
    r"""(?P<end>(?:\.\.\.|[.?!])+)      # terminal punctuation
        (?P<close>["'\u201d\u2019)\]]*)  # closing quotes or brackets
        \s+
        (?=["'\u201c\u2018(\[]*[A-Z0-9])  # next sentence starts upper case or digit
    """,
    re.VERBOSE,
)
_LAST_WORD = re.compile(r"(\S+)$")


def _is_abbreviation(text_before):
    """True if `text_before` (text up to a period) ends with an abbreviation."""
    match = _LAST_WORD.search(text_before)
    if not match:
        return False
    word = match.group(1).lstrip("\"'(\u201c\u2018[").lower()
    if word in ABBREVIATIONS:
        return True
    # A single letter is an initial ("J. S. Bach"), not a sentence end.
    return len(word) == 1 and word.isalpha()


def split_sentences(text):
    """Splits a paragraph of text into sentences.

    Args:
      text: a `str` paragraph; internal newlines and runs of whitespace are
        treated as single spaces.

    Returns:
      A list of sentence strings, stripped, without empty strings.

    Example:
    >>> split_sentences('Mr. Smith paid $3.14, e.g. for tea. "Why?" he asked. Done!')
    ['Mr. Smith paid $3.14, e.g. for tea.', '"Why?" he asked.', 'Done!']
    """
    text = " ".join(text.split())
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end_punctuation = match.group("end")
        if end_punctuation == "." and _is_abbreviation(text[start:match.start()]):
            continue
        sentences.append(text[start:match.end("close")])
        start = match.end()
    sentences.append(text[start:])
    return [s.strip() for s in sentences if s.strip()]


def split_paragraphs(text):
    """Splits text whose paragraphs are separated by blank lines into sentences.

    Args:
      text: a `str` with paragraphs separated by one or more blank lines.

    Returns:
      A list with one list of sentences per non-empty paragraph.
    """
    paragraphs = re.split(r"\n\s*\n", text)
    return [s for s in (split_sentences(p) for p in paragraphs) if s]
