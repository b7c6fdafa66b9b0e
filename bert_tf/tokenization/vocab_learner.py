"""Learns a BERT WordPiece vocab from text with tensorflow-text's learner.

tensorflow-text's `bert_vocab_from_dataset` splits words with its own `BasicTokenizer`, whose
NFKC case folding is not what `BertTokenizer` here does; so words are split and normalised by
`normalization.normalized_words` (exactly what the tokenizer feeds WordPiece) and only the
learning step of `wordpiece_tokenizer_learner_lib` is reused.
"""

import collections

import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from bert_tf.tokenization import normalization
from bert_tf.tokenization import vocab as vocab_lib


def reserved_tokens(num_unused=100):
    """BERT's reserved tokens, google-research's order: [PAD] [unused*] [UNK] [CLS] [SEP] [MASK]."""
    pad, *rest = vocab_lib.SPECIAL_TOKENS
    return [pad] + [f"[unused{i}]" for i in range(num_unused)] + rest


def word_counts(lines, lower_case=True):
    """Counts the words of one batch of lines, split and normalised as the tokenizer does.

    Args:
      lines: tf.string `[N]`, or a list of str or bytes.
      lower_case: normalise as an uncased tokenizer (lower-case + strip accents) or cased.

    Returns:
      A `collections.Counter` from word (str) to count. Special tokens typed in the text
      ("[CLS]") are left out: they are reserved anyway.
    """
    words = normalization.normalized_words(tf.constant(lines, tf.string) if not tf.is_tensor(lines)
                                           else lines, lower_case)[0].flat_values
    placeholder = normalization.PLACEHOLDER_START.encode("utf-8")
    counts = collections.Counter(words.numpy().tolist())
    return collections.Counter({w.decode("utf-8"): c for w, c in counts.items()
                                if not w.startswith(placeholder)})


def learn_vocab_from_counts(counts, vocab_size, num_unused=100, **learn_params):
    """Learns a WordPiece vocab from word counts (see `learn_vocab`; `counts` maps word to count).

    The learner sees the words in sorted order, so equal counts give an equal vocab however
    they were counted (`learn_vocab` here, or `bert_tf.data.records.beam_vocab` on Beam).
    """
    if not counts:
        raise ValueError("learn_vocab: the text holds no words to learn a vocab from.")
    return learner.learn(sorted(counts.items()), vocab_size, reserved_tokens(num_unused),
                         **learn_params)


def learn_vocab(lines, vocab_size, lower_case=True, num_unused=100, batch_size=1024,
                **learn_params):
    """Learns a WordPiece vocab from text in memory (`bert_tf.data.records.beam_vocab` for corpora).

    Args:
      lines: a `tf.data.Dataset` of tf.string scalars, or an iterable of str, one text per item.
      vocab_size: largest vocab size wanted (tensorflow-text's learner lands within 5% below it).
      lower_case: normalise as an uncased tokenizer (lower-case + strip accents) or cased.
      num_unused: number of `[unusedN]` slots after [PAD], free for later task tokens.
      batch_size: lines tokenized per step.
      **learn_params: passed to `wordpiece_tokenizer_learner_lib.learn` (e.g. `lower_thresh`,
        `max_unique_chars`).

    Returns:
      The vocab, a list of str: reserved tokens, then single characters and pieces.

    Raises:
      ValueError: `lines` holds no words.
    """
    if not isinstance(lines, tf.data.Dataset):
        lines = tf.data.Dataset.from_tensor_slices(tf.constant(list(lines), tf.string))
    counts = collections.Counter()
    for batch in lines.batch(batch_size):
        counts.update(word_counts(batch, lower_case))
    return learn_vocab_from_counts(counts, vocab_size, num_unused, **learn_params)


def write_vocab(vocab, vocab_file):
    """Writes one token per line (google-research `vocab.txt`), checking the special tokens."""
    with tf.io.gfile.GFile(vocab_file, "w") as f:
        f.write("".join(token + "\n" for token in vocab))
    vocab_lib.load_vocab(vocab_file)
