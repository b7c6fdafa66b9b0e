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


# Keras decays w -= lr·wd·w; tensorflow/models' LAMB puts wd·w in the update, whose trust ratio
# ‖w‖ / ‖wd·w‖ makes the decay-only step lr·w.
@pytest.mark.parametrize("name, kernel_factor", [("adamw", 1 - 0.1 * 0.5), ("lamb", 1 - 0.1),
                                                 ("keras_lamb", 1 - 0.1 * 0.5)])
def test_weight_decay_skips_bias_and_layer_norm(name, kernel_factor):
    dense = keras.layers.Dense(3)
    norm = keras.layers.LayerNormalization()
    model = keras.Sequential([keras.Input((4,)), dense, norm])
    norm.gamma.assign(2.0 * tf.ones_like(norm.gamma))
    norm.beta.assign(tf.ones_like(norm.beta))
    dense.bias.assign(tf.ones_like(dense.bias))
    before = [v.numpy().copy() for v in model.trainable_variables]
    optimizer = create_optimizer(name, 0.1, num_train_steps=10, num_warmup_steps=0,
                                 weight_decay=0.5)
    # Zero gradients: Adam/LAMB moments stay 0, so only the decay can move a variable.
    optimizer.apply_gradients([(tf.zeros_like(v), v) for v in model.trainable_variables])
    after = {v.path: v.numpy() for v in model.trainable_variables}
    for variable, old in zip(model.trainable_variables, before):
        if variable.name == "kernel":
            np.testing.assert_allclose(after[variable.path], old * kernel_factor, rtol=1e-6)
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



def _adamw_reference(weights, gradients, lr, weight_decay, decayed, beta_1=0.9, beta_2=0.999,
                     epsilon=1e-6):
    """Float64 AdamW as Keras defines it: decay w -= w·wd·lr first, then the ε-hat Adam step."""
    weights = [w.astype(np.float64) for w in weights]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    for t, grads in enumerate(gradients, start=1):
        alpha = lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        for i, g in enumerate(grads):
            g = g.numpy().astype(np.float64)
            if decayed[i]:
                weights[i] -= weights[i] * weight_decay * lr
            m[i] += (g - m[i]) * (1 - beta_1)
            v[i] += (g * g - v[i]) * (1 - beta_2)
            weights[i] -= alpha * m[i] / (np.sqrt(v[i]) + epsilon)
    return weights, m, v


def _train_with(optimizer_class, strategy, weights, gradients):
    with strategy.scope():
        variables = [keras.Variable(weights[0], name="kernel"),
                     keras.Variable(weights[1], name="bias")]
        optimizer = optimizer_class(learning_rate=0.05, weight_decay=0.1, epsilon=1e-6)
        optimizer.exclude_from_weight_decay(var_names=["bias"])
        optimizer.build(variables)

    @tf.function
    def step(grads):
        strategy.run(lambda g: optimizer.apply_gradients(zip(g, variables)), args=(grads,))

    for grads in gradients:
        step(grads)
    slots = lambda name: [v.numpy() for v in optimizer.variables if name in v.path]
    return [v.numpy() for v in variables], slots("momentum"), slots("velocity")


@pytest.mark.parametrize("optimizer_name", ["FusedAdamW", "keras.AdamW"])
def test_adamw_matches_float64_reference(optimizer_name):
    # The fused kernel must give Keras's AdamW (weights and both moment slots); Keras's own
    # class is the control. MirroredStrategy's per-device update of the fused kernel is
    # covered by tests/training/test_train_loop.py (mirrored equals one device).
    from bert_tf.training.distribution import get_strategy
    from bert_tf.training.optimization import FusedAdamW

    rng = np.random.default_rng(0)
    weights = [rng.normal(size=[3, 4]).astype(np.float32), np.ones([4], np.float32)]
    gradients = [[tf.constant(rng.normal(size=[3, 4]), tf.float32),
                  tf.constant(rng.normal(size=[4]), tf.float32)] for _ in range(5)]
    optimizer_class = FusedAdamW if optimizer_name == "FusedAdamW" else keras.optimizers.AdamW
    got = _train_with(optimizer_class, get_strategy("one_device"), weights, gradients)
    expected = _adamw_reference(weights, gradients, 0.05, 0.1, decayed=[True, False])
    for got_group, expected_group in zip(got, expected):
        assert len(got_group) == len(expected_group) == 2
        for g, e in zip(got_group, expected_group):
            # float32 rounding of w (|w| ~ 1) over 5 steps; a wrong formula is off by ~1e-2.
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=2e-6)


def test_fused_adamw_takes_sparse_gradients_like_keras():
    from bert_tf.training.optimization import FusedAdamW

    sparse = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    results = []
    for optimizer_class in (keras.optimizers.AdamW, FusedAdamW):
        table = keras.Variable(np.ones([3, 2], np.float32))
        optimizer_class(0.1).apply_gradients([(sparse, table)])
        results.append(table.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_fused_adamw_clips_decays_and_steps_like_keras_on_the_dense_gradient():
    # The one-call path (clip, decay and Adam in XLA) against Keras's AdamW on the same
    # gradients made dense: an active global clip (norm ~10 against 1.0), an embedding-like
    # sparse gradient whose row 0 comes twice (tf.gather's gradient of a repeated token), a
    # variable kept from decay, three steps. Keras's own step squares each sparse row apart,
    # so on repeated rows it moves the second moment off the dense gradient's (~5e-2).
    from bert_tf.training.optimization import FusedAdamW

    rng = np.random.default_rng(1)
    weights = [rng.normal(size=[5, 3]).astype(np.float32), rng.normal(size=[3]).astype(np.float32)]
    steps = [[tf.IndexedSlices(tf.constant(rng.normal(size=[3, 3]) * 4, tf.float32),
                               tf.constant([0, 2, 0]), tf.constant([5, 3])),
              tf.constant(rng.normal(size=[3]) * 4, tf.float32)] for _ in range(3)]
    results = []
    for optimizer_class, dense in ((keras.optimizers.AdamW, True), (FusedAdamW, False)):
        variables = [keras.Variable(weights[0], name="table"),
                     keras.Variable(weights[1], name="bias")]
        optimizer = optimizer_class(learning_rate=0.05, weight_decay=0.1, global_clipnorm=1.0)
        optimizer.exclude_from_weight_decay(var_names=["bias"])
        apply = tf.function(lambda grads: optimizer.apply_gradients(zip(grads, variables)))
        for grads in steps:
            apply([tf.convert_to_tensor(g) for g in grads] if dense else grads)
        results.append([v.numpy() for v in variables + optimizer.variables[2:]])
    for fused, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(fused, expected, rtol=2e-6, atol=1e-6)  # float32 rounding
    # A wrong clip (none, or the norm of the undeduplicated rows) moves the weights ~1e-2.
    assert not np.allclose(results[0][0], weights[0], atol=1e-3)
