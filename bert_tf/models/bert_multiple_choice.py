"""BertMultipleChoice: score each (context, choice) pair, softmax over choices (SWAG)."""

import keras
import tensorflow as tf

from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.models.task_model import BertTaskModel, check_encoder, dropout_and_dense, pooled_output


@keras.saving.register_keras_serializable(package="bert_tf")
class FoldChoices(keras.layers.Layer):
    """`[B, C, S]` → `[B·C, S]`, so every choice runs through the encoder as one sequence."""

    def call(self, x):
        return tf.reshape(x, [-1, tf.shape(x)[-1]])

    def compute_output_spec(self, x):
        return keras.KerasTensor((None, x.shape[-1]), dtype=x.dtype)  # int ids stay int


@keras.saving.register_keras_serializable(package="bert_tf")
class UnfoldChoices(keras.layers.Layer):
    """`[B·C, 1]` → `[B, C]`: one logit per choice."""

    def __init__(self, num_choices, **kwargs):
        super().__init__(**kwargs)
        self.num_choices = num_choices

    def call(self, x):
        return tf.reshape(x, [-1, self.num_choices])

    def compute_output_shape(self, input_shape):
        return (None, self.num_choices)

    def get_config(self):
        return dict(super().get_config(), num_choices=self.num_choices)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(BertTaskModel):
    """One dense unit on each choice's pooled output; logits over `num_choices` (paper §4.4).

    Args:
      encoder: a `BertEncoder`.
      num_choices: choices per example (4 in SWAG).
      dropout_rate: dropout before the head; defaults to the encoder's hidden dropout.

    Inputs are the encoder inputs with a choice axis, int32 `[B, num_choices, S]`;
    returns float32 `logits` `[B, num_choices]`.

    Example:
    >>> chooser = BertMultipleChoice(encoder, num_choices=4)  # doctest: +SKIP
    """

    def __init__(self, encoder, num_choices, dropout_rate=None, **kwargs):
        check_encoder(encoder)
        dropout, head = dropout_and_dense(encoder, 1, dropout_rate, name="choice_logit")
        inputs = {name: keras.Input(shape=(num_choices, None), dtype="int32", name=name)
                  for name in ENCODER_INPUTS}
        fold = FoldChoices()
        pooled = pooled_output(encoder, {name: fold(inputs[name]) for name in ENCODER_INPUTS})
        logits = UnfoldChoices(num_choices, dtype="float32")(head(dropout(pooled)))
        super().__init__(encoder, inputs=inputs, outputs=logits, **kwargs)
        self.num_choices = num_choices
        self.dropout_rate = dropout_rate
        self.head = head

    def task_config(self):
        return {"num_choices": self.num_choices, "dropout_rate": self.dropout_rate}
