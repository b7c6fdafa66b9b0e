"""The per-replica train step: micro-batch gradients, one all-reduce, global clipping, update.

Keras optimizers clip gradients per replica before their own all-reduce, which makes the
clip depend on the number of replicas. Here the step all-reduces first, clips the global
gradient, then hands the optimizer `g / num_replicas` so that Keras's all-reduce (a sum)
rebuilds exactly `g`. The step takes the optimizer's `global_clipnorm` over (Keras's own
clip would find the norm within bounds).
"""

import keras
import tensorflow as tf

from bert_tf.training.optimization import inner_optimizer


def model_inputs(model, batch):
    """The entries of `batch` that `model` takes (a dict model ignores labels and weights)."""
    names = model.input if isinstance(model.input, dict) else None
    return {name: batch[name] for name in names} if names is not None else batch


def _dense(gradient):
    # Embedding gradients arrive as IndexedSlices; all-reduce and accumulation want tensors.
    return None if gradient is None else tf.convert_to_tensor(gradient)


def _slice(batch, index, size):
    return tf.nest.map_structure(lambda t: t[index * size:(index + 1) * size], batch)


class ReplicaTrainStep:
    """Callable run by `strategy.run`: one optimizer update from one per-replica batch.

    Args:
      model: the Keras model; called on `model_inputs(model, batch)`.
      loss_fn: `loss_fn(batch, outputs) -> (loss, metrics)`; `loss` is the batch's share
        of the global-batch mean (sum of per-example losses / global batch size), `metrics`
        a dict of `(numerator, denominator)` sums.
      optimizer: a Keras optimizer (or `LossScaleOptimizer`), built on the model's variables;
        its `global_clipnorm` moves to this step's `clip_norm` (the optimizer's becomes None).
      gradient_accumulation_steps: k; the batch is split into k micro-batches whose
        gradients are summed before the update (same result as one k times larger batch).
    """

    def __init__(self, model, loss_fn, optimizer, gradient_accumulation_steps=1):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.loss_scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        # The step clips the all-reduced gradient itself and takes the setting over from the
        # optimizer: Keras would clip again per replica, a norm pass and a rescale pass over
        # every gradient that could only find the norm within bounds.
        inner = inner_optimizer(optimizer)
        self.clip_norm, inner.global_clipnorm = inner.global_clipnorm, None

    def _gradients(self, batch):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.model(model_inputs(self.model, batch), training=True)
            loss, metrics = self.loss_fn(batch, outputs)
            scaled = self.optimizer.scale_loss(loss) if self.loss_scaled else loss
        gradients = [_dense(g) for g in tape.gradient(scaled, variables)]
        return loss, metrics, gradients

    def _accumulated_gradients(self, batch):
        steps = self.gradient_accumulation_steps
        loss, metrics, gradients = self._gradients(_slice(batch, 0, self._micro_size(batch)))
        present = [i for i, g in enumerate(gradients) if g is not None]
        gradients = [gradients[i] for i in present]
        for index in tf.range(1, steps):
            micro = _slice(batch, index, self._micro_size(batch))
            micro_loss, micro_metrics, micro_gradients = self._gradients(micro)
            loss += micro_loss
            metrics = tf.nest.map_structure(tf.add, metrics, micro_metrics)
            gradients = [g + micro_gradients[i] for g, i in zip(gradients, present)]
        full = [None] * len(self.model.trainable_variables)
        for g, i in zip(gradients, present):
            full[i] = g
        return loss, metrics, full

    def _micro_size(self, batch):
        size = tf.shape(tf.nest.flatten(batch)[0])[0]
        return size // self.gradient_accumulation_steps

    def __call__(self, batch):
        if self.gradient_accumulation_steps > 1:
            loss, metrics, gradients = self._accumulated_gradients(batch)
        else:
            loss, metrics, gradients = self._gradients(batch)
        pairs = [(g, v) for g, v in zip(gradients, self.model.trainable_variables)
                 if g is not None]
        context = tf.distribute.get_replica_context()
        grads = context.all_reduce(tf.distribute.ReduceOp.SUM, [g for g, _ in pairs])
        scale = tf.cast(self.optimizer.dynamic_scale, tf.float32) if self.loss_scaled else None
        if self.clip_norm is not None:
            if scale is not None:
                grads = [g / scale for g in grads]
            grads, _ = tf.clip_by_global_norm(grads, self.clip_norm)
            if scale is not None:
                grads = [g * scale for g in grads]
        replicas = tf.cast(context.num_replicas_in_sync, tf.float32)
        if context.num_replicas_in_sync > 1:
            grads = [g / replicas for g in grads]
        self.optimizer.apply_gradients(zip(grads, [v for _, v in pairs]))
        return loss, metrics


def replica_eval_step(model, loss_fn):
    """Per-replica eval: `(loss, metrics)` of `loss_fn` on the inference-mode outputs."""

    def step(batch):
        outputs = model(model_inputs(model, batch), training=False)
        return loss_fn(batch, outputs)

    return step
