"""Long lines as overlapping windows of WordPieces (google-research's `doc_stride`), and pooling.

A line of `n` WordPieces fits a model of `max_seq_length` when `n <= max_seq_length - 2`
([CLS] and [SEP] take two). A longer one is either truncated to its first window (the
default, as `predict` does) or read as windows of `max_seq_length - 2` pieces whose starts are
`stride` apart, the last one reaching the line's end: run_squad's split of a long document
(google-research `run_squad.py`, `doc_stride`). The model's outputs over a line's windows are
then pooled into one result by their mean.

Example:
>>> window_spans(10, window=6, stride=4)
[(0, 6), (4, 10)]
>>> window_spans(10, window=6, stride=4, all_windows=False)
[(0, 6)]
"""

import numpy as np
import tensorflow as tf


def window_spans(length, window, stride, all_windows=True):
    """`(start, end)` piece spans covering a line of `length` pieces (one, cut, if not
    `all_windows`); every span but the last is `window` long, starts `stride` apart."""
    if length <= window or not all_windows:
        return [(0, min(length, window))]
    spans, start = [], 0
    while True:
        end = min(start + window, length)
        spans.append((start, end))
        if end == length:
            return spans
        start += min(stride, end - start)


def windowed_pieces(pieces, spans):
    """The windows' pieces, ragged `[W, (pieces)]`, from the lines' ragged `[B, (pieces)]`.

    Args:
      pieces: int ragged `[B, (pieces)]` (a line's WordPieces, words merged).
      spans: `(line, start, end)` per window, in the order wanted.
    """
    lines, starts, ends = (np.asarray(column, np.int64).reshape(-1) for column in zip(*spans))
    offsets = pieces.row_starts().numpy()[lines]
    return tf.gather(pieces.values, tf.ragged.range(offsets + starts, offsets + ends))


def mean_by_line(outputs, owners, num_lines):
    """`[num_lines, ...]` means of `outputs` `[W, ...]` over the windows each line owns."""
    owners = np.asarray(owners)
    sums = np.zeros((num_lines,) + outputs.shape[1:], np.float64)
    np.add.at(sums, owners, outputs)
    counts = np.bincount(owners, minlength=num_lines).reshape((-1,) + (1,) * (outputs.ndim - 1))
    return (sums / counts).astype(np.float32)
