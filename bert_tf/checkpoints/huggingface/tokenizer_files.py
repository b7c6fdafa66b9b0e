"""Writes a Hugging Face folder's tokenizer files for a WordPiece vocab and casing.

`write_tokenizer_files(folder, tokens, lower_case)` writes what transformers'
`AutoTokenizer.from_pretrained(folder)` and sentence-transformers read: `vocab.txt`,
`tokenizer.json` (the `tokenizers` library's file: `BertNormalizer`, `BertPreTokenizer`,
WordPiece, the [CLS] ... [SEP] template; transformers 5 loads a BERT tokenizer from it alone),
`tokenizer_config.json` (`do_lower_case`, the special tokens, `model_max_length`) and
`special_tokens_map.json`. The normalizer lower-cases and strips accents together, as
bert_tf's WordPiece does (`tokenizer_json.read_tokenizer_json` reads the file back).

Example:
>>> write_tokenizer_files("/tmp/hf", vocab_lib.load_vocab("vocab.txt"), lower_case=True,
...                       model_max_length=256)  # doctest: +SKIP
"""

import json
import os

from bert_tf.checkpoints import tokenizer_json as files
from bert_tf.tokenization import vocab as vocab_lib

SPECIAL_TOKENS_FILE = "special_tokens_map.json"
# transformers' key of each special token.
_SPECIAL_KEYS = {"unk_token": vocab_lib.UNK, "sep_token": vocab_lib.SEP,
                 "pad_token": vocab_lib.PAD, "cls_token": vocab_lib.CLS,
                 "mask_token": vocab_lib.MASK}


def _special(token, ids):
    return {"SpecialToken": {"id": token, "type_id": ids}}


def _sequence(name, ids):
    return {"Sequence": {"id": name, "type_id": ids}}


def tokenizer_object(tokens, lower_case):
    """The `tokenizer.json` object of BERT's WordPiece tokenizer over `tokens` (index = id).

    Raises:
      VocabError: `tokens` lacks one of BERT's special tokens.
    """
    index = {token: i for i, token in enumerate(tokens)}
    missing = [token for token in vocab_lib.SPECIAL_TOKENS if token not in index]
    if missing:
        raise vocab_lib.VocabError(f"The vocab lacks the special token(s) {', '.join(missing)}; "
                                   f"BERT needs all of {' '.join(vocab_lib.SPECIAL_TOKENS)}.")
    cls, sep = vocab_lib.CLS, vocab_lib.SEP
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": index[token], "content": token, "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}
                         for token in sorted(vocab_lib.SPECIAL_TOKENS, key=index.get)],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": lower_case},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [_special(cls, 0), _sequence("A", 0), _special(sep, 0)],
            "pair": [_special(cls, 0), _sequence("A", 0), _special(sep, 0),
                     _sequence("B", 1), _special(sep, 1)],
            "special_tokens": {token: {"id": token, "ids": [index[token]], "tokens": [token]}
                               for token in (cls, sep)}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": vocab_lib.UNK,
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": index},
    }


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_tokenizer_files(folder, tokens, lower_case, model_max_length=None):
    """Writes `vocab.txt`, `tokenizer.json`, `tokenizer_config.json` and
    `special_tokens_map.json` into `folder` (module docstring).

    Args:
      folder: an existing folder.
      tokens: the WordPiece vocabulary, index = id.
      lower_case: whether the model is uncased (lower-cases and strips accents).
      model_max_length: the longest input the tokenizer truncates to (`tokenizer_config.json`;
        sentence-transformers 6 reads its `max_seq_length` there), or None.
    """
    files.write_vocab(tokens, os.path.join(folder, files.VOCAB_FILE))
    _write_json(os.path.join(folder, files.TOKENIZER_FILE), tokenizer_object(tokens, lower_case))
    config = dict(_SPECIAL_KEYS, tokenizer_class="BertTokenizer", do_lower_case=lower_case,
                  strip_accents=None, tokenize_chinese_chars=True, do_basic_tokenize=True)
    if model_max_length is not None:
        config["model_max_length"] = model_max_length
    _write_json(os.path.join(folder, files.TOKENIZER_CONFIG_FILE), config)
    _write_json(os.path.join(folder, SPECIAL_TOKENS_FILE), _SPECIAL_KEYS)
