"""The BERT optimizers: schedule shape, decoupled weight decay and its exclusions."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.optimization import WarmupLinearDecay, create_optimizer, current_learning_rate


def test_schedule_is_google_research_warmup_then_linear_decay():
    schedule = WarmupLinearDecay(2e-4, num_train_steps=1000, num_warmup_steps=100)
    steps = np.array([0, 1, 50, 99, 100, 400, 999, 1000, 1500])
    got = np.array([float(schedule(s)) for s in steps])
    # google-research optimization.py: warm-up lr*step/warmup; else polynomial (power 1) decay
    # from lr at step 0 to 0 at num_train_steps.
    expected = np.where(steps < 100, 2e-4 * steps / 100, 2e-4 * np.maximum(0.0, 1 - steps / 1000))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-10)  # float32 steps


def test_schedule_rejects_warmup_longer_than_training():
    with pytest.raises(ValueError, match="num_warmup_steps"):
        WarmupLinearDecay(1e-4, num_train_steps=10, num_warmup_steps=20)


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_weight_decay_skips_bias_and_layer_norm(name):
    dense = keras.layers.Dense(3)
    norm = keras.layers.LayerNormalization()
    model = keras.Sequential([keras.Input((4,)), dense, norm])
    norm.gamma.assign(2.0 * tf.ones_like(norm.gamma))
    norm.beta.assign(tf.ones_like(norm.beta))
    dense.bias.assign(tf.ones_like(dense.bias))
    before = [v.numpy().copy() for v in model.trainable_variables]
    optimizer = create_optimizer(name, 0.1, num_train_steps=10, num_warmup_steps=0, weight_decay=0.5)
    # Zero gradients: Adam/LAMB moments stay 0, so only the decay can move a variable.
    optimizer.apply_gradients([(tf.zeros_like(v), v) for v in model.trainable_variables])
    after = {v.path: v.numpy() for v in model.trainable_variables}
    for variable, old in zip(model.trainable_variables, before):
        if variable.name == "kernel":
            np.testing.assert_allclose(after[variable.path], old * (1 - 0.1 * 0.5), rtol=1e-6)
        else:
            np.testing.assert_array_equal(after[variable.path], old)


def test_mixed_float16_wraps_in_loss_scale_optimizer_and_reports_lr():
    optimizer = create_optimizer("adamw", 1e-3, 100, 10, dtype="mixed_float16")
    assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    assert float(current_learning_rate(optimizer)) == 0.0
    assert optimizer.inner_optimizer.global_clipnorm == 1.0


def test_unknown_optimizer_is_named():
    with pytest.raises(ValueError, match="sgd.*adamw"):
        create_optimizer("sgd", 1e-3, 10, 1)
