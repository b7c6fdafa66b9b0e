"""mask_one_word: one whole word hidden per text, one [MASK] per WordPiece, answer kept."""

import os

import tensorflow as tf

from bert_tf.inference.fill_mask import fill_mask
from bert_tf.inference.masked_examples import MASK, mask_one_word
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

TEXTS = [
    "God saw the lights, that it was good.",
    "And the Evening and the Morning were the first day.",
    "Let the waters under the heaven be gathered.",
    "It is so.",  # no word of 4+ letters: skipped
    "The fruit tree yielding fruit after his kind.",
]


def test_hides_one_eligible_word_per_text_behind_one_mask_per_piece(masked_lm_model_dir):
    vocab_file = os.path.join(masked_lm_model_dir, "vocab.txt")
    examples = mask_one_word(TEXTS, vocab_file, seed=3)
    assert len(examples) == 4
    assert mask_one_word(TEXTS, vocab_file, seed=3) == examples  # seeded
    tokenizer = BertTokenizer(vocab_file)
    for (masked, word), text in zip(examples, [t for t in TEXTS if t != "It is so."]):
        pieces = tokenizer.tokenize(tf.constant([word])).flat_values.shape[0]
        assert MASK * pieces in masked and MASK * (pieces + 1) not in masked
        assert masked.replace(MASK * pieces, word, 1) == text
        assert word.isalpha() and len(word) >= 4
    picked = {word: masked for masked, word in
              (mask_one_word(TEXTS[:1], vocab_file, seed=s)[0] for s in range(30))}
    assert set(picked) == {"lights", "that", "good"}  # every eligible word, never "saw" or "the"
    assert picked["lights"] == "God saw the [MASK][MASK], that it was good."  # light ##s


def test_the_examples_fill_as_one_word_each(masked_lm_model_dir):
    examples = mask_one_word(TEXTS, os.path.join(masked_lm_model_dir, "vocab.txt"))
    results = fill_mask(masked_lm_model_dir, [masked for masked, _ in examples])
    assert [len(result.words) for result in results] == [1] * len(examples)
