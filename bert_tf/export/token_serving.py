"""Serving for the token classifier (NER): one label per input word, with byte offsets."""

import tensorflow as tf

from bert_tf.export.serving_module import BertServingModule


def word_spans(starts, ends):
    """Byte span of each word from per-piece offsets `[B, (words), (pieces)]` -> `[B, (words)]`."""
    pieces = starts.values  # [B·words, (pieces)], every word has at least one piece
    word_start = tf.gather(pieces.flat_values, pieces.row_starts())
    word_end = tf.gather(ends.values.flat_values, ends.values.row_limits() - 1)
    return starts.with_values(word_start), ends.with_values(word_end)


class TokenClassifierServing(BertServingModule):
    """Tags each word of `text` with the label of its first WordPiece (paper §5.3).

    `serving_default` outputs (W = most words of any example in the batch, at most
    `seq_length - 2`): `labels` string
    `[B, W]`, `word_start` / `word_end` int64 `[B, W]` (UTF-8 byte offsets into `text`, end
    exclusive), `word_mask` int32 `[B, W]` (1 for words that fit in `seq_length` and got a
    label; 0 for padding and words cut by truncation, whose label is ""), plus the token-level
    outputs of `serve_tokenized`: `logits [B, S, C]`, `label_ids` int32 `[B, S]`, `input_mask`
    (S: the packed width W from `serving_default`, see `serving_module`).
    """

    def tokenized_outputs(self, inputs):
        logits = self.model(inputs, training=False)
        label_ids = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {"logits": logits, "label_ids": label_ids, "input_mask": inputs["input_mask"]}

    def text_outputs(self, texts):
        ids, starts, ends = self.preprocessor.tokenizer.tokenize_with_offsets(texts["text"])
        inputs = self.preprocessor.bert_pack_inputs([ids])
        outputs = self.served_tokenized(inputs)

        # Packed as [CLS] pieces [SEP]: a word's first piece sits after [CLS] and all pieces
        # of the words before it; it has a label if truncation kept it.
        # At most seq_length - 2 words fit, so W is capped there (a 100,000-word text gives
        # outputs of seq_length - 2 words, not 100,000).
        max_words = self.seq_length - 2
        pieces_per_word = ids.row_lengths(axis=2)[:, :max_words].to_tensor(0)  # [B, W]
        first_piece = 1 + tf.cumsum(pieces_per_word, axis=1, exclusive=True)
        kept_pieces = tf.reduce_sum(inputs["input_mask"], axis=1, keepdims=True) - 2
        word_mask = (pieces_per_word > 0) & (first_piece <= tf.cast(kept_pieces, first_piece.dtype))
        position = tf.cast(tf.where(word_mask, first_piece, 0), tf.int32)
        label_ids = tf.gather(outputs["label_ids"], position, batch_dims=1)
        labels = tf.gather(tf.constant(self.label_names), label_ids)
        word_start, word_end = word_spans(starts[:, :max_words], ends[:, :max_words])
        return dict(
            outputs,
            labels=tf.where(word_mask, labels, ""),
            word_start=tf.where(word_mask, word_start.to_tensor(0), 0),
            word_end=tf.where(word_mask, word_end.to_tensor(0), 0),
            word_mask=tf.cast(word_mask, tf.int32),
        )
