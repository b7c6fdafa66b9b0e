"""BertTaskModel, the base of the task models: the encoder is held, not copied."""

import keras
import numpy as np
import pytest

from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.models.frozen_bert_features import FrozenBertFeatures
from bert_tf.models.task_model import BertTaskModel, dropout_and_dense
from tests.fixtures import TINY_CONFIG
from tests.models.conftest import encoder_batch


def test_task_model_shares_the_encoder_instance():
    encoder = BertEncoder(TINY_CONFIG)
    classifier = BertClassifier(encoder, num_classes=2)
    tagger = BertTokenClassifier(encoder, num_classes=3)
    assert classifier.encoder is encoder and tagger.encoder is encoder
    assert classifier.checkpoint_items()["encoder"] is encoder


def test_head_dropout_defaults_to_the_encoder_hidden_dropout():
    encoder = BertEncoder(TINY_CONFIG)
    dropout, dense = dropout_and_dense(encoder, 3, None, name="logits")
    assert dropout.rate == TINY_CONFIG.hidden_dropout_prob
    assert dropout_and_dense(encoder, 3, 0.25, name="logits")[0].rate == 0.25
    assert dense.units == 3 and dense.dtype_policy.name == "float32"


def test_heads_start_from_a_normal_of_initializer_range_not_a_truncated_one():
    encoder = BertEncoder(TINY_CONFIG)
    _, dense = dropout_and_dense(encoder, 64, None, name="logits")
    dense.build((None, 4096))
    kernel = dense.kernel.numpy()  # 262,144 draws: the sample std is within 0.3% of the true one
    assert abs(kernel.std() / TINY_CONFIG.initializer_range - 1) < 0.01  # truncated at 2σ: 0.88
    assert np.abs(kernel).max() > 3 * TINY_CONFIG.initializer_range  # a truncated one stops at 2σ
    assert np.all(dense.bias.numpy() == 0)


def test_a_non_encoder_is_refused():
    inputs = keras.Input((3,))
    with pytest.raises(TypeError, match="BertEncoder.*received Dense"):
        BertTaskModel(keras.layers.Dense(3), inputs=inputs, outputs=inputs)


@pytest.mark.parametrize("build", [
    lambda encoder: BertClassifier(encoder, num_classes=2),
    lambda encoder: BertTokenClassifier(encoder, num_classes=2),
    lambda encoder: BertSpanLabeler(encoder),
    lambda encoder: BertPretrainer(encoder),
    lambda encoder: BertMultipleChoice(encoder, num_choices=2),
    lambda encoder: FrozenBertFeatures(encoder),
], ids=["classifier", "token_classifier", "span_labeler", "pretrainer", "multiple_choice",
        "frozen_features"])
def test_every_task_model_refuses_a_non_encoder_first(build):
    with pytest.raises(TypeError, match="BertEncoder.*received Dense"):
        build(keras.layers.Dense(3))


def test_first_fit_traces_its_train_step_once_and_trains_as_keras_deferred_build_does():
    # Keras (TensorFlow, no strategy) builds the optimizer inside the first traced step, and a
    # tf.function whose first trace makes variables traces it twice; BertTaskModel.fit builds
    # it first. Same weights and optimizer state as Keras's own deferred build.
    batch = encoder_batch()
    labels = np.array([0, 1, 1], np.int32)
    results = {}
    for fit in (BertTaskModel.fit, keras.Model.fit):
        keras.utils.set_random_seed(0)
        model = BertClassifier(BertEncoder(TINY_CONFIG), num_classes=2)
        model.compile(optimizer=keras.optimizers.AdamW(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        traces = []

        def counted(data, step=model.train_step):
            traces.append(1)
            return step(data)

        model.train_step = counted
        fit(model, batch, labels, batch_size=3, epochs=2, verbose=0)
        results[fit] = (len(traces), [v.numpy() for v in model.weights + model.optimizer.variables])
    (ours, ours_values), (keras_traces, keras_values) = results.values()
    assert (ours, keras_traces) == (1, 2)
    for a, b in zip(ours_values, keras_values, strict=True):
        np.testing.assert_array_equal(a, b)
