"""BertSpanLabeler: start and end logits of an answer span (paper §4.2–4.3, SQuAD)."""

import keras

from bert_tf.layers.dense import Dense
from bert_tf.layers.initializers import head_normal
from bert_tf.models.bert_encoder import encoder_inputs
from bert_tf.models.task_model import BertTaskModel, call_encoder, check_encoder


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(BertTaskModel):
    """A start vector S and end vector E dotted with every token (paper §4.2).

    For SQuAD 2.0 the no-answer span is start = end = 0, the [CLS] position (§4.3).

    Args:
      encoder: a `BertEncoder`.

    Returns a dict of float32 `start_logits` and `end_logits`, each `[B, S]`.

    Example:
    >>> reader = BertSpanLabeler(encoder)  # doctest: +SKIP
    """

    def __init__(self, encoder, **kwargs):
        check_encoder(encoder)
        head = Dense(
            2, kernel_initializer=head_normal(encoder.config.initializer_range),
            dtype="float32", name="span_logits")
        inputs = encoder_inputs()
        logits = head(call_encoder(encoder, inputs)["sequence_output"])  # [B, S, 2]
        outputs = {
            "start_logits": logits[..., 0],
            "end_logits": logits[..., 1],
        }
        super().__init__(encoder, inputs=inputs, outputs=outputs, **kwargs)
        self.head = head

    def task_config(self):
        return {}
