"""BertTaskModel: the shared base of models that hold a BertEncoder instance plus a head."""

import keras

from bert_tf.layers.dense import Dense
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import head_normal
from bert_tf.models.bert_encoder import ENCODER_INPUTS, BertEncoder


def check_encoder(encoder):
    """Raises TypeError unless `encoder` is a `BertEncoder` (every task model's first check)."""
    if not isinstance(encoder, BertEncoder):
        raise TypeError(f"`encoder` must be a BertEncoder; received {type(encoder).__name__}.")


def dropout_and_dense(encoder, units, dropout_rate, name):
    """A fine-tuning head: dropout (default: the encoder's `hidden_dropout_prob`, as in the
    paper) then a float32 dense layer initialized as Hugging Face's heads (`head_normal`)."""
    rate = encoder.config.hidden_dropout_prob if dropout_rate is None else dropout_rate
    dense = Dense(
        units, kernel_initializer=head_normal(encoder.config.initializer_range),
        dtype="float32", name=name)
    return Dropout(rate), dense


def call_encoder(encoder, inputs, **kwargs):
    """Calls `encoder` on the encoder entries of an inputs dict (`kwargs`: its call's)."""
    return encoder({name: inputs[name] for name in ENCODER_INPUTS}, **kwargs)


class BertTaskModel(keras.Model):
    """A functional model over an encoder instance; subclasses give `task_config()`.

    The encoder is held, not copied, so one pretrained encoder serves every head and its
    checkpoint key stays `encoder` (the model directory of docs/design.md).
    """

    def __init__(self, encoder, inputs, outputs, **kwargs):
        check_encoder(encoder)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.encoder = encoder

    def task_config(self):
        """The constructor arguments other than `encoder`."""
        raise NotImplementedError

    def fit(self, *args, **kwargs):
        # Without a distribution strategy, Keras's TensorFlow trainer leaves the optimizer to
        # be built inside the first traced train step; a tf.function whose first trace makes
        # variables traces again, so every model's first `fit` traced its step twice. Built
        # here, as Keras's own `compile_from_config` builds it, the step is traced once.
        optimizer = getattr(self, "optimizer", None)  # unset before `compile()`
        if optimizer is not None and not optimizer.built:
            with self.distribute_strategy.scope():
                optimizer.build(self.trainable_variables)
        return super().fit(*args, **kwargs)

    def checkpoint_items(self):
        """Objects for `tf.train.Checkpoint`: the encoder under `encoder`, the head as `head`."""
        return {"encoder": self.encoder, "head": self.head}

    def get_config(self):
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            **self.task_config(),
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        encoder = config.pop("encoder")
        if isinstance(encoder, dict):
            encoder = keras.saving.deserialize_keras_object(encoder)
        return cls(encoder, **config)
