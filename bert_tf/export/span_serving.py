"""Serving for the span labeler (SQuAD): question + context in, answer text and offsets out."""

import tensorflow as tf

from bert_tf.export.serving_module import BertServingModule

# google-research run_squad.py `max_answer_length` (in WordPiece tokens).
MAX_ANSWER_LENGTH = 30
# Score of impossible spans: finite, so outputs stay JSON-safe for TF Serving's REST API.
_IMPOSSIBLE = -1e9


def best_spans(start_logits, end_logits, is_context, max_answer_length):
    """Finds the best span `start <= end < start + max_answer_length` inside the context.

    Args:
      start_logits, end_logits: float32 `[B, S]`.
      is_context: bool `[B, S]`, the positions of context tokens.
      max_answer_length: the longest span, in tokens.

    Returns:
      `(start, end, score, found)`: int32 positions `[B]`, float32 `start + end` logit `[B]`,
      bool `[B]` (False when the context is empty: no span exists).
    """
    seq_length = tf.shape(start_logits)[1]
    scores = start_logits[:, :, None] + end_logits[:, None, :]  # [B, S(start), S(end)]
    length = tf.range(seq_length)[None, :] - tf.range(seq_length)[:, None]  # end - start
    valid = (length >= 0) & (length < max_answer_length)
    valid = valid[None] & is_context[:, :, None] & is_context[:, None, :]
    scores = tf.where(valid, scores, _IMPOSSIBLE)
    flat = tf.reshape(scores, [tf.shape(scores)[0], -1])
    best = tf.argmax(flat, axis=-1, output_type=tf.int32)
    score = tf.reduce_max(flat, axis=-1)
    found = tf.reduce_any(tf.reshape(valid, tf.shape(flat)), axis=-1)
    return best // seq_length, best % seq_length, score, found


class SpanServing(BertServingModule):
    """Extractive QA: `text_a` is the question, `text_b` the context.

    `serving_default` outputs: `answer` (string `[B]`, a substring of `text_b`), `start` and
    `end` (int64 `[B]`, UTF-8 byte offsets into `text_b`, end exclusive, from the tokenizer's
    offsets), `score` (float32 `[B]`, start + end logit of the best span of at most
    `max_answer_length` tokens inside the (possibly truncated) context), `null_score` (the
    [CLS] span, SQuAD 2.0's no-answer score, paper §4.3), and the raw `start_logits` and
    `end_logits [B, W]` (W: the packed width, see `serving_module`). An empty context gives answer
    "" at offsets 0 with the null score.
    """

    def __init__(self, restored, seq_length=384, max_answer_length=MAX_ANSWER_LENGTH,
                 padding="longest"):
        super().__init__(restored, seq_length, text_pair=True, padding=padding)
        self.max_answer_length = max_answer_length

    def tokenized_outputs(self, inputs):
        outputs = self.model(inputs, training=False)
        return {"start_logits": outputs["start_logits"], "end_logits": outputs["end_logits"]}

    def text_outputs(self, texts):
        tokenizer = self.preprocessor.tokenizer
        question = tokenizer.tokenize(texts["text_a"])
        context, starts, ends = tokenizer.tokenize_with_offsets(texts["text_b"])
        inputs = self.preprocessor.bert_pack_inputs([question, context])
        outputs = self.served_tokenized(inputs)

        # Packed as [CLS] question [SEP] context [SEP]; truncation keeps a prefix of each, so
        # position p holds context piece p - (kept question + 2) for the kept context pieces.
        mask, type_ids = inputs["input_mask"], inputs["input_type_ids"]
        first_context = tf.reduce_sum(mask * (1 - type_ids), axis=1, keepdims=True)  # [B, 1]
        kept_context = tf.reduce_sum(type_ids, axis=1, keepdims=True) - 1
        piece = tf.range(tf.shape(mask)[1])[None, :] - first_context  # [B, S]
        is_context = (piece >= 0) & (piece < kept_context)
        start, end, score, found = best_spans(outputs["start_logits"], outputs["end_logits"],
                                              is_context, self.max_answer_length)

        # [B, pieces + 1]: the extra column keeps the gathers valid when no context exists.
        piece_starts = tf.pad(starts.merge_dims(1, 2).to_tensor(0), [[0, 0], [0, 1]])
        piece_ends = tf.pad(ends.merge_dims(1, 2).to_tensor(0), [[0, 0], [0, 1]])
        def byte_offset(offsets, position):
            index = tf.gather(piece, position, batch_dims=1)
            offset = tf.gather(offsets, tf.maximum(index, 0), batch_dims=1)
            return tf.where(found, offset, 0)
        start_byte = byte_offset(piece_starts, start)
        end_byte = byte_offset(piece_ends, end)
        null_score = outputs["start_logits"][:, 0] + outputs["end_logits"][:, 0]
        return dict(
            outputs,
            answer=tf.strings.substr(texts["text_b"], start_byte, end_byte - start_byte),
            start=start_byte,
            end=end_byte,
            score=tf.where(found, score, null_score),
            null_score=null_score,
        )
