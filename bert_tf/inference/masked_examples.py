"""Fill-mask examples from plain sentences: one whole word hidden in each, the answer kept.

A trained model is easiest to judge on text it has not seen with a word hidden that a person
can guess too. The word is hidden behind one `[MASK]` per WordPiece, so `fill_mask` predicts
each piece and `FillMaskResult.words` shows them joined, next to the hidden word.
"""

import numpy as np
import tensorflow as tf

from bert_tf.tokenization.bert_tokenizer import BertTokenizer

MASK = "[MASK]"


def mask_one_word(texts, vocab_file, lower_case=True, seed=0, min_chars=4):
    """Hides one alphabetic word of each text behind `[MASK]`s (one per WordPiece).

    Words are split by the model's own `BertTokenizer`; a word of at least `min_chars` letters
    is picked at random (seeded, so the same texts give the same examples), which favours
    content words over "the" and "of".

    Args:
      texts: list of str.
      vocab_file, lower_case: the model's tokenizer.
      seed: picks the word.
      min_chars: shortest word to hide.

    Returns:
      `[(masked_text, hidden_word)]`, one per text that has such a word, in order; the hidden
      word as written in the text.

    Example:
    >>> mask_one_word(["And God said, Let there be light."], vocab_file)  # doctest: +SKIP
    [('And God said, Let there be [MASK].', 'light')]
    """
    if not texts:
        return []
    tokenizer = BertTokenizer(vocab_file, lower_case=lower_case)
    _, starts, ends = tokenizer.tokenize_with_offsets(tf.constant(texts))  # [B, (words), (pieces)]
    rng = np.random.default_rng(seed)
    examples = []
    for text, word_starts, word_ends in zip(texts, starts.to_list(), ends.to_list()):
        raw = text.encode("utf-8")
        spans = [(pieces_start[0], pieces_end[-1], len(pieces_start))
                 for pieces_start, pieces_end in zip(word_starts, word_ends)]
        eligible = [span for span in spans
                    if _is_word(raw[span[0]:span[1]].decode("utf-8", "replace"), min_chars)]
        if not eligible:
            continue
        start, end, num_pieces = eligible[rng.integers(len(eligible))]
        masked = raw[:start].decode("utf-8") + MASK * num_pieces + raw[end:].decode("utf-8")
        examples.append((masked, raw[start:end].decode("utf-8")))
    return examples


def _is_word(word, min_chars):
    return len(word) >= min_chars and word.isalpha()
