"""In-graph WordPiece tokenization and BERT preprocessing (tensorflow-text), reference ids."""

from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.tokenization.vocab import (
    SpecialTokens,
    VocabError,
    check_case_matches_vocab,
    load_vocab,
    special_token_ids,
)
from bert_tf.tokenization.vocab_learner import learn_vocab, write_vocab

__all__ = [
    "BertPreprocessor",
    "BertTokenizer",
    "SpecialTokens",
    "VocabError",
    "check_case_matches_vocab",
    "learn_vocab",
    "load_vocab",
    "special_token_ids",
    "write_vocab",
]
