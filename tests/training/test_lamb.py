"""`bert_tf.training.lamb.Lamb` is tensorflow/models' LAMB, not `keras.optimizers.Lamb`."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.dtype_policy import policy_scope
from bert_tf.training.distribution import get_strategy
from bert_tf.training.lamb import Lamb
from bert_tf.training.optimization import (
    NO_WEIGHT_DECAY,
    WarmupLinearDecay,
    create_optimizer,
    inner_optimizer,
)

PEAK, TRAIN_STEPS, WARMUP, DECAY = 0.02, 20, 5, 0.01
# name, shape, initial scale (0: zeros, where the trust ratio falls back to 1)
VARIABLES = (("kernel", (4, 3), 0.5), ("bias", (3,), 0.1), ("gamma", (3,), 1.0),
             ("beta", (3,), 0.0), ("embeddings", (5, 3), 0.05))


def _lr(step):
    """WarmupLinearDecay(PEAK, TRAIN_STEPS, WARMUP) at `step`, as google-research defines it."""
    return PEAK * step / WARMUP if step < WARMUP else PEAK * (1 - step / TRAIN_STEPS)


def _reference_lamb(weights, gradients, names, decay_excluded, adaptation_excluded,
                    beta_1=0.9, beta_2=0.999, epsilon=1e-6):
    """tensorflow/models' LAMB (official/modeling/optimization/lamb.py), float64 NumPy."""
    excluded = lambda name, patterns: any(re.search(p, name) for p in patterns)
    # Hyper-parameters in float32, as both optimizers cast them to the variables' dtype
    # (1 - float32(0.999) is 1.3e-5 off 0.001).
    beta_1, beta_2, epsilon = (float(np.float32(x)) for x in (beta_1, beta_2, epsilon))
    weights = [w.astype(np.float64) for w in weights]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    for step, grads in enumerate(gradients):
        t = step + 1
        for i, g in enumerate(grads):
            g = g.astype(np.float64)
            m[i] = beta_1 * m[i] + (1 - beta_1) * g
            v[i] = beta_2 * v[i] + (1 - beta_2) * g * g
            update = (m[i] / (1 - beta_1 ** t)) / (np.sqrt(v[i] / (1 - beta_2 ** t)) + epsilon)
            if not excluded(names[i], decay_excluded):
                update = update + DECAY * weights[i]
            ratio = 1.0
            if not excluded(names[i], adaptation_excluded):
                w_norm, u_norm = np.linalg.norm(weights[i]), np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            weights[i] = weights[i] - ratio * _lr(step) * update
    return weights, m, v


def _problem(steps=TRAIN_STEPS, seed=0):
    rng = np.random.default_rng(seed)
    weights = [(scale * rng.normal(size=shape)).astype(np.float32) for _, shape, scale in VARIABLES]
    gradients = [[rng.normal(size=w.shape).astype(np.float32) for w in weights]
                 for _ in range(steps)]
    return weights, gradients


def _variables(weights):
    return [keras.Variable(w, name=name) for w, (name, _, _) in zip(weights, VARIABLES)]


def _slots(optimizer, name):
    return [v.numpy() for v in optimizer.variables if v.path.endswith(f"_{name}")]


@pytest.mark.parametrize("adaptation_excluded", [None, ["bias"]], ids=["default", "bias_only"])
def test_matches_tensorflow_models_lamb_over_20_steps(adaptation_excluded):
    # Kernel and embeddings are decayed and adapted; bias, gamma and beta are neither (default),
    # or (bias_only) gamma and the zero beta are adapted but not decayed.
    weights, gradients = _problem()
    variables = _variables(weights)
    schedule = WarmupLinearDecay(PEAK, TRAIN_STEPS, WARMUP)
    optimizer = Lamb(schedule, weight_decay_rate=DECAY, exclude_from_weight_decay=NO_WEIGHT_DECAY,
                     exclude_from_layer_adaptation=adaptation_excluded)

    @tf.function
    def step(grads):
        optimizer.apply_gradients(zip(grads, variables))

    for grads in gradients:
        step([tf.constant(g) for g in grads])
    names = [name for name, _, _ in VARIABLES]
    expected = _reference_lamb(weights, gradients, names, NO_WEIGHT_DECAY,
                               adaptation_excluded or NO_WEIGHT_DECAY)
    got_weights = [v.numpy() for v in variables]
    for g, e in zip(got_weights, expected[0]):
        # float32 against float64: measured 1.1e-7; the steps move the weights by up to 0.1.
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-6)
    for got_slots, expected_slots in zip((_slots(optimizer, "m"), _slots(optimizer, "v")),
                                         expected[1:]):
        assert len(got_slots) == len(expected_slots) == len(VARIABLES)
        for g, e in zip(got_slots, expected_slots):  # |m|, |v| ~ 1
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_differs_from_keras_lamb_on_a_decayed_kernel():
    # Keras decays outside the trust ratio (w -= lr·wd·w, then the ratio-scaled Adam step) and
    # adapts the bias; tensorflow/models puts the decay in the update the ratio normalises.
    weights, gradients = _problem(steps=3)
    results = {}
    for label, make in (("ours", lambda: Lamb(0.1, weight_decay_rate=0.1,
                                                exclude_from_weight_decay=NO_WEIGHT_DECAY)),
                        ("keras", lambda: keras.optimizers.Lamb(0.1, weight_decay=0.1,
                                                                epsilon=1e-6))):
        variables = _variables(weights)
        optimizer = make()
        if label == "keras":
            optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
        for grads in gradients:
            optimizer.apply_gradients(zip([tf.constant(g) for g in grads], variables))
        results[label] = [v.numpy() for v in variables]
    kernel_gap = np.abs(results["ours"][0] - results["keras"][0]).max()
    step_size = np.abs(results["ours"][0] - weights[0]).max()
    assert kernel_gap > 0.05 * step_size, (kernel_gap, step_size)


def test_config_round_trip_keeps_the_update():
    schedule = WarmupLinearDecay(PEAK, TRAIN_STEPS, WARMUP)
    original = Lamb(schedule, beta_1=0.8, beta_2=0.99, epsilon=1e-5, weight_decay_rate=0.03,
                    exclude_from_weight_decay=["bias", "gamma"],
                    exclude_from_layer_adaptation=["bias"], global_clipnorm=2.0)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(original))
    assert type(restored) is Lamb
    assert restored.get_config() == original.get_config()
    assert restored.get_config()["exclude_from_layer_adaptation"] == ["bias"]
    assert restored.get_config()["exclude_from_weight_decay"] == ["bias", "gamma"]
    weights, gradients = _problem(steps=WARMUP + 2)
    results = []
    for optimizer in (original, restored):
        variables = _variables(weights)
        for grads in gradients:
            optimizer.apply_gradients(zip([tf.constant(g) for g in grads], variables))
        results.append([v.numpy() for v in variables])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_rejects_keras_weight_decay_and_late_exclusions():
    with pytest.raises(ValueError, match="weight_decay_rate"):
        Lamb(0.1, weight_decay=0.01)
    with pytest.raises(ValueError, match="constructor"):
        Lamb(0.1).exclude_from_weight_decay(var_names=["bias"])


def _train_under(strategy, weights, gradients):
    with strategy.scope():
        variables = _variables(weights)
        optimizer = Lamb(0.05, weight_decay_rate=DECAY, exclude_from_weight_decay=NO_WEIGHT_DECAY)
        optimizer.build(variables)

    @tf.function
    def step(grads):
        # As train_step.ReplicaTrainStep: apply in replica context, g / replicas per replica
        # (Keras all-reduces by summing).
        def replica_fn():
            replicas = tf.distribute.get_replica_context().num_replicas_in_sync
            optimizer.apply_gradients(zip([g / replicas for g in grads], variables))
        strategy.run(replica_fn)

    for grads in gradients:
        step([tf.constant(g) for g in grads])
    return [[r.numpy() for r in strategy.experimental_local_results(v.value)] for v in variables]


def test_mirrored_over_two_devices_equals_one_device():
    weights, gradients = _problem(steps=3)
    mirrored = get_strategy("mirrored")
    assert mirrored.num_replicas_in_sync == 2
    one = _train_under(get_strategy("one_device"), weights, gradients)
    two = _train_under(mirrored, weights, gradients)
    for single, replicas in zip(one, two):
        assert len(replicas) == 2
        for replica in replicas:
            np.testing.assert_allclose(replica, single[0], rtol=0, atol=1e-6)
    # The steps moved the weights (the comparison is not of untouched initial values).
    assert np.abs(one[0][0] - weights[0]).max() > 1e-2


def test_mixed_bfloat16_keeps_float32_variables_and_slots():
    with policy_scope("mixed_bfloat16"):
        dense = keras.layers.Dense(3)
        model = keras.Sequential([keras.Input((4,)), dense, keras.layers.LayerNormalization()])
        optimizer = create_optimizer("lamb", 1e-2, num_train_steps=10, num_warmup_steps=0)
        x = tf.random.stateless_normal([8, 4], seed=[1, 2])
        with tf.GradientTape() as tape:
            out = model(x, training=True)
            loss = tf.reduce_mean(tf.square(tf.cast(out, tf.float32)))
        assert out.dtype == tf.bfloat16
        grads = tape.gradient(loss, model.trainable_variables)
        before = dense.kernel.numpy().copy()
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        # A bfloat16 gradient is cast to the float32 variable's dtype.
        optimizer.apply_gradients([(tf.cast(grads[0], tf.bfloat16), dense.kernel)])
    slots = [v for v in optimizer.variables if "iteration" not in v.path]
    assert len(slots) == 2 * len(model.trainable_variables)
    assert all(v.dtype == "float32" for v in model.trainable_variables + slots)
    kernel = dense.kernel.numpy()
    assert np.all(np.isfinite(kernel)) and np.abs(kernel - before).max() > 0


@pytest.mark.parametrize("name, expected_class", [("lamb", Lamb),
                                                  ("keras_lamb", keras.optimizers.Lamb)])
def test_create_optimizer_names(name, expected_class):
    optimizer = inner_optimizer(create_optimizer(name, 1e-3, 100, 10, weight_decay=0.02))
    assert type(optimizer) is expected_class
    if name == "lamb":
        config = optimizer.get_config()
        assert config["weight_decay_rate"] == 0.02 and config["weight_decay"] is None
        assert config["exclude_from_weight_decay"] == list(NO_WEIGHT_DECAY)
        assert config["exclude_from_layer_adaptation"] == list(NO_WEIGHT_DECAY)
        assert optimizer.epsilon == 1e-6 and optimizer.global_clipnorm == 1.0
