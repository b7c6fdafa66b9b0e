"""Tokenization throughput: bert_tf's in-graph tokenizer vs Hugging Face `tokenizers`.

Called by `benchmarks/benchmark.py --what=tokenize`; never timed in tests.
"""

import functools

import tensorflow as tf
import tensorflow_text as text

from benchmarks.timing import interleaved_median_seconds
from bert_tf.tokenization import bert_tokenizer
from bert_tf.tokenization import vocab as vocab_lib


def _batches(lines, batch_size):
    return [lines[i:i + batch_size] for i in range(0, len(lines) - batch_size + 1, batch_size)]


def _run_all(run, batches):
    for batch in batches:
        run(batch)


def _tf_runner(tokenize):
    fn = tf.function(lambda s: tokenize(s).flat_values,
                     input_signature=[tf.TensorSpec([None], tf.string)])

    def run(batch):
        return fn(tf.constant(batch)).shape[0]
    return run


def benchmark_tokenize(vocab_file, lines, batch_sizes=(1, 64, 1024), lower_case=True, repeats=5,
                       max_lines=8192):
    """Measures lines/s and wordpieces/s, batched, for each tokenizer available.

    Args:
        vocab_file: WordPiece `vocab.txt`.
        lines: list of str, real text (one example per line).
        batch_sizes: batch sizes to time; each uses `max_lines` lines at most (full batches only).
        lower_case: uncased (True) or cased tokenization.
        repeats: timed passes per measurement; the median is reported.
        max_lines: cap on lines per measurement (batch 1 uses `max_lines // 8`).

    Returns:
        A list of dicts, one per (tokenizer, batch size): `tokenizer`, `batch_size`, `lines`,
        `seconds`, `lines_per_s`, `wordpieces_per_s` and `ratio_vs_hf` (throughput over
        HF `tokenizers` at the same batch size; None when `tokenizers` is not installed).
        Tokenizers: "bert_tf" (this package, reference parity), "tf_text_fast_bert"
        (tensorflow-text's FastBertTokenizer alone, no parity fixes, for scale) and
        "hf_tokenizers" (BertWordPieceTokenizer.encode_batch, where importable).
    """
    ours = bert_tokenizer.BertTokenizer(vocab_file, lower_case=lower_case)
    fast_bert = text.FastBertTokenizer(
        vocab=vocab_lib.load_vocab(vocab_file), token_out_type=tf.int32,
        lower_case_nfd_strip_accents=lower_case)
    runners = {"bert_tf": _tf_runner(ours.tokenize), "tf_text_fast_bert": _tf_runner(
        fast_bert.tokenize)}
    try:
        import tokenizers  # Dev-only: the reference for the ratio.
        hf = tokenizers.BertWordPieceTokenizer(vocab_file, lowercase=lower_case)
        runners["hf_tokenizers"] = lambda batch: len(
            hf.encode_batch(batch, add_special_tokens=False))
    except ImportError:
        hf = None
    rows = []
    for batch_size in batch_sizes:
        limit = max_lines // 8 if batch_size == 1 else max_lines
        batches = _batches(lines[:limit], batch_size)
        used = [line for batch in batches for line in batch]
        pieces = int(tf.size(ours.tokenize(tf.constant(used)).flat_values))
        seconds = interleaved_median_seconds(
            {name: functools.partial(_run_all, run, batches) for name, run in runners.items()},
            repeats=repeats)
        for name, s in seconds.items():
            rows.append(dict(
                tokenizer=name, batch_size=batch_size, lines=len(used), seconds=s,
                lines_per_s=len(used) / s, wordpieces_per_s=pieces / s,
                ratio_vs_hf=seconds["hf_tokenizers"] / s if hf else None))
    return rows
