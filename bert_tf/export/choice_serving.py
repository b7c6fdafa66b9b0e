"""Serving for multiple choice (SWAG): a context and C candidate endings per example."""

import tensorflow as tf

from bert_tf.export.serving_module import BertServingModule
from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.models.task_model import pooled_output


class MultipleChoiceServing(BertServingModule):
    """Scores `text_b[i, c]` as the continuation of `text_a[i]`.

    `serving_default` inputs: `text_a` string `[B]`, `text_b` string `[B, C]`; `serve_tokenized`
    inputs are int32 `[B, C, S]`. Outputs: `logits` and `probabilities` `[B, C]`, `choice`
    int32 `[B]` (the best candidate's index).

    The model's encoder and head are called directly, one sequence per (example, choice),
    so C is whatever the request sends rather than the `num_choices` of training.
    """

    tokenized_rank = 3

    def __init__(self, restored, seq_length=128, padding="longest"):
        super().__init__(restored, seq_length, text_pair=True, padding=padding)

    def tokenized_outputs(self, inputs):
        shape = tf.shape(inputs["input_word_ids"])  # [B, C, S]
        folded = {name: tf.reshape(inputs[name], [-1, shape[2]]) for name in ENCODER_INPUTS}
        pooled = pooled_output(self.model.encoder, folded, training=False)
        logits = tf.cast(tf.reshape(self.model.head(pooled), [shape[0], shape[1]]), tf.float32)
        return {"logits": logits,
                "probabilities": tf.nn.softmax(logits, axis=-1),
                "choice": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def text_outputs(self, texts):
        choices = texts["text_b"]
        shape = tf.shape(choices)  # [B, C]
        context = tf.repeat(texts["text_a"], shape[1])  # [B·C]
        packed = self.preprocessor((context, tf.reshape(choices, [-1])))
        width = tf.shape(packed["input_word_ids"])[1]  # the packed width, W <= seq_length
        inputs = {name: tf.reshape(packed[name], [shape[0], shape[1], width])
                  for name in ENCODER_INPUTS}
        return self.served_tokenized(inputs)

    def text_specs(self):
        return {"text_a": tf.TensorSpec([None], tf.string, name="text_a"),
                "text_b": tf.TensorSpec([None, None], tf.string, name="text_b")}
