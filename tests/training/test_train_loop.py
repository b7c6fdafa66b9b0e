"""The generic loop: replicas, accumulation, NaN stop, eval (resume: tests/integration)."""

import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.training.distribution import get_strategy
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining_loss import pretraining_loss_fn
from bert_tf.training.train_loop import NonFiniteLossError, Trainer, run_training
from tests.training.conftest import dataset_fn, synthetic_examples

GLOBAL_BATCH = 8


def _trainer(strategy, config, weights, optimizer_fn, accumulation=1):
    with strategy.scope():
        model = build_pretrainer(config)
        model.set_weights(weights)
        optimizer = optimizer_fn()
    loss_fn = pretraining_loss_fn(GLOBAL_BATCH)
    return Trainer(strategy, model, loss_fn, optimizer, accumulation), model


def _train(trainer, model, output_dir, steps, **kwargs):
    losses = []
    result = run_training(trainer, dataset_fn(GLOBAL_BATCH), GLOBAL_BATCH, steps, str(output_dir),
                          model.checkpoint_items(), progress_fn=lambda p: losses.append(p.loss),
                          **kwargs)
    return result, losses


@pytest.fixture
def initial_weights(dropout_free_config):
    return build_pretrainer(dropout_free_config).get_weights()


def test_mirrored_matches_one_device_at_the_same_global_batch(dropout_free_config, initial_weights,
                                                              tmp_path):
    adamw = lambda: create_optimizer("adamw", 1e-2, num_train_steps=4, num_warmup_steps=1,
                                     clip_norm=0.5)
    runs = {}
    for name in ("one_device", "mirrored"):
        trainer, model = _trainer(get_strategy(name), dropout_free_config, initial_weights, adamw)
        result, losses = _train(trainer, model, tmp_path / name, 4, save_checkpoints_steps=4)
        runs[name] = (losses, model.get_weights(), result)
    assert runs["mirrored"][2].checkpoint.endswith("ckpt-4")
    np.testing.assert_allclose(runs["mirrored"][0], runs["one_device"][0], atol=1e-4)
    assert max(np.abs(a - b).max() for a, b in zip(runs["one_device"][1], initial_weights)) > 1e-3
    for mirrored, single in zip(runs["mirrored"][1], runs["one_device"][1]):
        np.testing.assert_allclose(mirrored, single, atol=1e-4)


def test_gradient_accumulation_equals_one_larger_batch(dropout_free_config, initial_weights,
                                                       tmp_path):
    sgd = lambda: keras.optimizers.SGD(learning_rate=0.5)
    weights = {}
    for k in (1, 4):
        trainer, model = _trainer(get_strategy("one_device"), dropout_free_config, initial_weights,
                                  sgd, k)
        _train(trainer, model, tmp_path / f"k{k}", 2, steps_per_loop=2)
        weights[k] = model.get_weights()
    moved = max(np.abs(a - b).max() for a, b in zip(weights[1], initial_weights))
    assert moved > 1e-3
    for accumulated, single in zip(weights[4], weights[1]):
        np.testing.assert_allclose(accumulated, single, atol=1e-5)


def test_nan_loss_stops_naming_the_step_and_keeps_the_last_checkpoint(dropout_free_config,
                                                                      initial_weights, tmp_path):
    adamw = lambda: create_optimizer("adamw", 1e-3, num_train_steps=10, num_warmup_steps=1)
    trainer, model = _trainer(get_strategy("one_device"), dropout_free_config, initial_weights,
                              adamw)
    clean = dataset_fn(GLOBAL_BATCH)

    def poisoned(context, skip_batches=0):
        # Batch index 3 (step 4) carries a NaN weight, so its loss is NaN.
        def poison(index, batch):
            bad = tf.where(index == 3, np.nan, 1.0)
            return dict(batch, masked_lm_weights=batch["masked_lm_weights"] * bad)
        return clean(context).enumerate().map(poison).skip(skip_batches)

    with pytest.raises(NonFiniteLossError, match="step 4") as error:
        run_training(trainer, poisoned, GLOBAL_BATCH, 10, str(tmp_path), model.checkpoint_items(),
                     steps_per_loop=5, save_checkpoints_steps=2)
    assert error.value.checkpoint.endswith("ckpt-2")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-2")


def test_batch_that_does_not_split_over_replicas_is_refused(dropout_free_config, initial_weights,
                                                            tmp_path):
    trainer, model = _trainer(get_strategy("mirrored"), dropout_free_config, initial_weights,
                              lambda: keras.optimizers.SGD(0.1), accumulation=3)
    with pytest.raises(ValueError, match="global batch size 8 .* 2 replica.* 3 gradient"):
        run_training(trainer, dataset_fn(8), 8, 2, str(tmp_path), model.checkpoint_items())


def test_evaluate_reports_metric_ratios(dropout_free_config, initial_weights):
    trainer, _ = _trainer(get_strategy("one_device"), dropout_free_config, initial_weights,
                          lambda: keras.optimizers.SGD(0.1))
    metrics = trainer.evaluate(lambda ctx: dataset_fn(4)(ctx).take(3))
    assert set(metrics) == {"mlm_accuracy", "mlm_loss", "nsp_accuracy", "nsp_loss", "real_tokens"}
    assert 0 <= metrics["mlm_accuracy"] <= 1 and metrics["nsp_loss"] == pytest.approx(np.log(2),
                                                                                      abs=0.05)


@pytest.mark.parametrize("strategy_name", ["one_device", "mirrored"])
def test_evaluate_reads_the_held_out_batches_once(strategy_name, dropout_free_config,
                                                  initial_weights):
    trainer, _ = _trainer(get_strategy(strategy_name), dropout_free_config, initial_weights,
                          lambda: keras.optimizers.SGD(0.1))
    reads = []

    def counted(context):
        def count(batch):
            tf.py_function(lambda: reads.append(1), [], [])
            return batch
        return dataset_fn(4)(context).map(count)

    trainer.start_reading(counted, max_steps=3)  # What a training run does before its loop.
    if strategy_name == "one_device":  # tf.distribute's multi-device iterator starts lazily.
        waited = 0.0
        while not reads and waited < 60:
            time.sleep(0.05)
            waited += 0.05
        assert reads, "start_reading did not start the held-out pipeline"
    first = trainer.evaluate(counted, max_steps=3)
    second = trainer.evaluate(counted, max_steps=3)
    assert second == first
    assert len(reads) == 3 * trainer.strategy.num_replicas_in_sync  # one input pipeline here


def test_a_partial_last_held_out_batch_is_traced_with_the_full_ones(dropout_free_config,
                                                                    initial_weights):
    trainer, _ = _trainer(get_strategy("one_device"), dropout_free_config, initial_weights,
                          lambda: keras.optimizers.SGD(0.1))
    examples = synthetic_examples(10, seed=3)
    held_out = lambda context: tf.data.Dataset.from_tensor_slices(examples).batch(4)  # 4, 4, 2
    metrics = trainer.evaluate(held_out, max_steps=3)
    assert trainer.eval_fn.experimental_get_tracing_count() == 1
    # Same ratios as one batch of all 10 examples (sums over batches, then one division).
    whole = trainer.evaluate(lambda context: tf.data.Dataset.from_tensors(examples))
    assert metrics == pytest.approx(whole, rel=1e-5)


def test_step_clips_the_global_gradient_once(dropout_free_config, initial_weights):
    from bert_tf.training.train_step import ReplicaTrainStep, model_inputs
    from tests.training.conftest import synthetic_examples

    strategy = get_strategy("one_device")
    with strategy.scope():
        model = build_pretrainer(dropout_free_config)
        model.set_weights(initial_weights)
        optimizer = keras.optimizers.SGD(learning_rate=1.0, global_clipnorm=0.01)
        optimizer.build(model.trainable_variables)
    loss_fn = pretraining_loss_fn(GLOBAL_BATCH)
    batch = {k: v[:GLOBAL_BATCH] for k, v in synthetic_examples(GLOBAL_BATCH).items()}
    # The unclipped gradient, from a plain tape on the same weights.
    with tf.GradientTape() as tape:
        loss, _ = loss_fn(batch, model(model_inputs(model, batch), training=True))
    gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]
    norm = float(tf.linalg.global_norm(gradients))
    assert norm > 0.01 * 10  # the clip binds
    before = [v.numpy() for v in model.trainable_variables]
    step = ReplicaTrainStep(model, loss_fn, optimizer)
    strategy.run(tf.function(step), (batch,))
    for variable, old, gradient in zip(model.trainable_variables, before, gradients):
        np.testing.assert_allclose(variable.numpy() - old, -gradient.numpy() * 0.01 / norm,
                                   atol=1e-7)
    assert step.clip_norm == 0.01 and optimizer.global_clipnorm is None  # no second clip
