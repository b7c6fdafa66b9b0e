"""SQuAD examples → fixed-length windows: [CLS] question [SEP] context window [SEP].

A context longer than the room left by the question is cut into windows that start every
`doc_stride` tokens (google-research `run_squad.py`). Each window records, for its context
tokens, the byte span in the context and whether this window gives the token its most context,
so the postprocessor can map a predicted span back to text and score each token once.
Tokenization is the in-graph `BertTokenizer`, called on batches; windowing is plain Python
because it is per-example bookkeeping, not tensor math.
"""

import dataclasses

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.finetuning.table_reader import DataError
from bert_tf.finetuning.text_batches import feature_batches

_TOKENIZE_BATCH = 256
_FEATURE_NAMES = ("input_word_ids", "input_type_ids", "input_mask", "start_positions",
                  "end_positions", "example_index", "token_byte_spans", "token_is_max_context")


@dataclasses.dataclass
class SquadFeatures:
    """Column arrays, one row per window; `N` windows of `S` = max_seq_length tokens."""

    input_word_ids: np.ndarray      # int32 [N, S]
    input_mask: np.ndarray          # int32 [N, S]
    input_type_ids: np.ndarray      # int32 [N, S]
    start_positions: np.ndarray     # int32 [N]; 0 ([CLS]) when the answer is not in the window
    end_positions: np.ndarray       # int32 [N]
    example_index: np.ndarray       # int32 [N]
    token_byte_spans: np.ndarray    # int32 [N, S, 2]; context byte [start, end), -1 elsewhere
    token_is_max_context: np.ndarray  # bool [N, S]

    def __len__(self):
        return len(self.example_index)

    def model_inputs(self):
        return {"input_word_ids": self.input_word_ids, "input_mask": self.input_mask,
                "input_type_ids": self.input_type_ids}


def _flat_ids(ragged):
    """Ragged `[B, (words), (pieces)]` → list of B int lists."""
    return ragged.merge_dims(1, 2).to_list()


def _tokenize(tokenizer, texts, with_offsets):
    ids, starts, ends = [], [], []
    for begin in range(0, len(texts), _TOKENIZE_BATCH):
        batch = tf.constant(texts[begin:begin + _TOKENIZE_BATCH])
        if with_offsets:
            piece_ids, piece_starts, piece_ends = tokenizer.tokenize_with_offsets(batch)
            starts += _flat_ids(piece_starts)
            ends += _flat_ids(piece_ends)
        else:
            piece_ids = tokenizer.tokenize(batch)
        ids += _flat_ids(piece_ids)
    return ids, starts, ends


def _windows(num_tokens, window_length, doc_stride):
    """(start, length) of each window over `num_tokens` context tokens."""
    spans, start = [], 0
    while True:
        length = min(num_tokens - start, window_length)
        spans.append((start, length))
        if start + length >= num_tokens:
            return spans
        start += min(length, doc_stride)


def _is_max_context(spans, span_index, position):
    """google-research's rule: the window maximising min(left, right context) + 0.01·length."""
    best_score, best_index = None, None
    for index, (start, length) in enumerate(spans):
        end = start + length - 1
        if start <= position <= end:
            score = min(position - start, end - position) + 0.01 * length
            if best_score is None or score > best_score:
                best_score, best_index = score, index
    return best_index == span_index


def _answer_token_span(example, starts, ends):
    """Token indices (inclusive) of the training answer, from its character offsets."""
    context = example.context
    byte_start = len(context[:example.answer_start].encode("utf-8"))
    byte_end = len(context[:example.answer_start + len(example.answer_text)].encode("utf-8"))
    inside = [i for i, (s, e) in enumerate(zip(starts, ends)) if e > byte_start and s < byte_end]
    return (inside[0], inside[-1]) if inside else (None, None)


def convert_examples_to_features(examples, tokenizer, max_seq_length=384, doc_stride=128,
                                 max_query_length=64, is_training=False):
    """Tokenizes and windows `examples` (a list of `SquadExample`).

    Args:
      examples: from `read_squad_examples`.
      tokenizer: a `BertTokenizer`.
      max_seq_length, doc_stride, max_query_length: google-research's flags.
      is_training: set start/end positions from `answer_start` (0, 0 when out of window).

    Raises:
      DataError: `max_seq_length` leaves no room for context after a question.
    """
    contexts = sorted({example.context for example in examples})
    context_ids, context_starts, context_ends = _tokenize(tokenizer, contexts, True)
    by_context = {c: i for i, c in enumerate(contexts)}
    query_ids = _tokenize(tokenizer, [example.question for example in examples], False)[0]
    rows = {name: [] for name in _FEATURE_NAMES}
    unanswerable_in_window = 0
    for example_index, example in enumerate(examples):
        query = query_ids[example_index][:max_query_length]
        window_length = max_seq_length - len(query) - 3
        if window_length < 1:
            raise DataError(
                f"max_seq_length={max_seq_length} is too short for question {example.qas_id!r} "
                f"({len(query)} tokens after max_query_length={max_query_length}) plus [CLS] and "
                "two [SEP]; raise --max_seq_length or lower --max_query_length.")
        c = by_context[example.context]
        doc, starts, ends = context_ids[c], context_starts[c], context_ends[c]
        answer = (None, None)
        if is_training and not example.is_impossible:
            answer = _answer_token_span(example, starts, ends)
        spans = _windows(len(doc), window_length, doc_stride)
        for span_index in range(len(spans)):
            row = _window_row(tokenizer, query, doc, starts, ends, spans, span_index, answer,
                              max_seq_length)
            row["example_index"] = example_index
            unanswerable_in_window += is_training and not example.is_impossible and \
                row["start_positions"] == 0
            for name, value in row.items():
                rows[name].append(value)
    if unanswerable_in_window:
        logging.info("%d training windows do not contain their answer; their target is [CLS].",
                     unanswerable_in_window)
    return SquadFeatures(**{
        name: np.asarray(values, dtype=bool if name == "token_is_max_context" else np.int32)
        for name, values in rows.items()})


def _window_row(tokenizer, query, doc, starts, ends, spans, span_index, answer, max_seq_length):
    """The padded [CLS] query [SEP] window [SEP] row of one window, with its answer positions."""
    start, length = spans[span_index]
    offset = len(query) + 2  # [CLS] question [SEP]
    ids = [tokenizer.cls_id] + query + [tokenizer.sep_id] + doc[start:start + length] + \
        [tokenizer.sep_id]
    types = [0] * offset + [1] * (length + 1)
    byte_spans = np.full((max_seq_length, 2), -1, np.int32)
    max_context = np.zeros(max_seq_length, bool)
    for i in range(length):
        byte_spans[offset + i] = (starts[start + i], ends[start + i])
        max_context[offset + i] = _is_max_context(spans, span_index, start + i)
    start_position = end_position = 0
    if answer[0] is not None and start <= answer[0] and answer[1] < start + length:
        start_position = answer[0] - start + offset
        end_position = answer[1] - start + offset
    pad = max_seq_length - len(ids)
    return {"input_word_ids": ids + [tokenizer.pad_id] * pad,
            "input_type_ids": types + [0] * pad,
            "input_mask": [1] * len(ids) + [0] * pad,
            "start_positions": start_position, "end_positions": end_position,
            "token_byte_spans": byte_spans, "token_is_max_context": max_context}


def make_dataset(features, batch_size, training=False, seed=0, skip_batches=0, padding="fixed"):
    """Batches of encoder inputs, with `{start_positions, end_positions}` targets when training.

    Each batch is cut to the width `padding` gives its longest window; training batches are
    sorted by length unless `padding` is "fixed" (`text_batches.feature_batches`).
    """
    targets = None
    if training:
        targets = {"start_positions": features.start_positions,
                   "end_positions": features.end_positions}
    return feature_batches(features.model_inputs(), targets, len(features), batch_size, padding,
                           training, seed, skip_batches)
