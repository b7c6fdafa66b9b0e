"""BertTaskModel: the shared base of models that hold a BertEncoder instance plus a head."""

import keras
import tensorflow as tf

from bert_tf.errors import UserError
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


def pooled_output(encoder, inputs, **kwargs):
    """The encoder's `pooled_output` of an inputs dict, its last block computing [CLS] alone.

    A head on the pooled output reads nothing else, so `output_positions` `[B, 0]` stop the
    last block at [CLS] (keys and values still at every token): the same values for about
    1/L less of the encoder's position-wise work (docs/design.md, "The encoder and its heads").
    `kwargs`: the encoder call's (e.g. `training`).
    """
    no_positions = keras.ops.zeros_like(inputs["input_mask"][:, :0])  # [B, 0]
    return call_encoder(encoder, inputs, output_positions=no_positions,
                        **kwargs)["pooled_output"]


class UnsupportedStrategyError(UserError, ValueError):
    """A Keras `fit` or `evaluate` under a strategy it cannot run there."""


def refuse_several_workers(strategy, method):
    """Raises `UnsupportedStrategyError` under a `MultiWorkerMirroredStrategy` of 2+ workers.

    Keras 3's TensorFlow trainer builds from its first batch reduced by
    `strategy.reduce("MEAN", batch)`, which that strategy takes across workers for single
    tensors only: every bert_tf task model takes a dict of ids, so `fit` and `evaluate` on
    two workers failed with a stack trace inside Keras (2026-12-07; one worker runs, and so does
    `predict`, which builds from no batch). The run_* entry points train on several workers
    with their own loop.
    """
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return
    if len(strategy.cluster_resolver.cluster_spec().as_dict().get("worker", ())) > 1:
        raise UnsupportedStrategyError(
            f"Keras `{method}` of a bert_tf task model cannot run under a "
            "MultiWorkerMirroredStrategy of several workers (Keras builds from a first batch "
            "reduced by strategy.reduce, which that strategy takes for single tensors, not a "
            "dict of ids); train on several workers with python -m bert_tf.run_classifier "
            "(run_ner, run_squad, run_multiple_choice) "
            "--distribution_strategy=multi_worker_mirrored, or on one machine under "
            "MirroredStrategy.")


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
        refuse_several_workers(self.distribute_strategy, "fit")
        optimizer = getattr(self, "optimizer", None)  # unset before `compile()`
        if optimizer is not None and not optimizer.built:
            with self.distribute_strategy.scope():
                optimizer.build(self.trainable_variables)
        return super().fit(*args, **kwargs)

    def evaluate(self, *args, **kwargs):
        refuse_several_workers(self.distribute_strategy, "evaluate")
        return super().evaluate(*args, **kwargs)

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
