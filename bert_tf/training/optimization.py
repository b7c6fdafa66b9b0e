"""Optimizers of BERT pretraining and fine-tuning: AdamW or LAMB, warm-up + linear decay.

google-research's `AdamWeightDecayOptimizer` is Adam with decoupled weight decay (Loshchilov &
Hutter) that skips LayerNorm and bias variables, global-norm clipping at 1.0 and a learning
rate that rises linearly over `num_warmup_steps`, then falls linearly to 0 at
`num_train_steps`. Keras 3's `AdamW` gives AdamW's update rule (Keras adds Adam's bias
correction, which google-research left out), run here as one XLA call
(one replica) or in TensorFlow's fused Adam kernel (several).
`lamb` is `bert_tf.training.lamb.Lamb`, tensorflow/models' LAMB (decay inside the trust
ratio, no decay or ratio for LayerNorm and bias); `keras_lamb` is `keras.optimizers.Lamb`
(decay outside the ratio, every variable adapted), kept for comparison.
"""

import keras
import tensorflow as tf

from bert_tf.training.lamb import Lamb

# Matched (re.search) against a variable's short Keras name, by Keras for AdamW and by
# lamb.matches_any for LAMB: LayerNorm weights are gamma/beta.
NO_WEIGHT_DECAY = ("bias", "gamma", "beta", "LayerNorm", "layer_norm")
OPTIMIZERS = ("adamw", "lamb", "keras_lamb")


@keras.saving.register_keras_serializable(package="bert_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up to `learning_rate`, then linear decay to `end_learning_rate`.

    As google-research's `optimization.py`: the decay line runs from `learning_rate` at step 0
    to `end_learning_rate` at `num_train_steps`; warm-up overrides it for the first steps.

    Example:
    >>> schedule = WarmupLinearDecay(1e-4, num_train_steps=100, num_warmup_steps=10)
    >>> [round(float(schedule(s)), 7) for s in (0, 5, 10, 55, 100)]
    [0.0, 5e-05, 9e-05, 4.5e-05, 0.0]
    """

    def __init__(self, learning_rate, num_train_steps, num_warmup_steps, end_learning_rate=0.0):
        if num_train_steps <= 0 or not 0 <= num_warmup_steps <= num_train_steps:
            raise ValueError("Need 0 <= num_warmup_steps <= num_train_steps and num_train_steps "
                             f"> 0; received num_warmup_steps={num_warmup_steps}, "
                             f"num_train_steps={num_train_steps}.")
        self.learning_rate = learning_rate
        self.num_train_steps = num_train_steps
        self.num_warmup_steps = num_warmup_steps
        self.end_learning_rate = end_learning_rate

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        peak, end = self.learning_rate, self.end_learning_rate
        # 1. Warm-up: 0 → peak over num_warmup_steps.
        warmup = peak * step / max(self.num_warmup_steps, 1)
        # 2. Decay: peak at step 0 → end at num_train_steps.
        decay = end + (peak - end) * (1.0 - step / self.num_train_steps)
        # 3. Floor: stay at end past num_train_steps.
        decay = tf.maximum(decay, end)
        return tf.where(step < self.num_warmup_steps, warmup, decay)

    def get_config(self):
        return {"learning_rate": self.learning_rate, "num_train_steps": self.num_train_steps,
                "num_warmup_steps": self.num_warmup_steps,
                "end_learning_rate": self.end_learning_rate}


def _adamw_values(variable, momentum, velocity, gradient, scale, decay, learning_rate, step,
                  beta_1, beta_2, epsilon):
    """`(variable, momentum, velocity)` after one clip-scaled, decayed Adam step (Keras's
    formulas; the arguments are values, not variables)."""
    gradient = gradient * scale
    momentum = momentum + (gradient - momentum) * (1.0 - beta_1)
    velocity = velocity + (tf.square(gradient) - velocity) * (1.0 - beta_2)
    alpha = learning_rate * tf.sqrt(1.0 - tf.pow(beta_2, step)) / (1.0 - tf.pow(beta_1, step))
    variable = variable - (variable * (decay * learning_rate)
                           + alpha * momentum / (tf.sqrt(velocity) + epsilon))
    return variable, momentum, velocity


# The step of a few rows (`_adamw_rows_step`), one XLA call instead of ~15 small ops.
_adamw_row_values = tf.function(_adamw_values, jit_compile=True)


@tf.function(jit_compile=True)
def _adamw_step(variable, momentum, velocity, gradient, *settings):
    """Clip scale, decay and Adam of one variable, compiled by XLA into one pass over it.

    One call per variable: XLA runs a call on one thread, and TensorFlow runs independent
    calls side by side on its inter-op threads. `settings`: `_adamw_values`'s scale to
    epsilon."""
    targets = (variable, momentum, velocity)
    for target, value in zip(targets, _adamw_values(*targets, gradient, *settings)):
        target.assign(value)


def _adamw_rows_step(variable, momentum, velocity, rows, row_gradients, scale, *settings):
    """`_adamw_step` for a gradient that is zero outside `rows` (an embedding table's).

    Every row still takes its step (the moments decay, the weight moves), so the table is
    stepped with a zero gradient, then `rows` are stepped again from their old values with
    their gradients `[U, H]` and written back. The same values as the dense step, without the
    dense `[V, H]` gradient: no scatter into a zero table, one read less of the largest
    variable. Three calls, not one: XLA copies the whole table to scatter into it (MiniLM:
    23 ms against 13 for the dense step). `rows` must be unique."""
    targets = (variable, momentum, velocity)
    old = [tf.gather(target, rows) for target in targets]
    # 0 · scale, not 0: a non-finite norm makes every row NaN, as on the dense gradient.
    _adamw_step(*targets, tf.zeros_like(scale) * scale, scale, *settings)
    for target, value in zip(targets, _adamw_row_values(*old, row_gradients, scale, *settings)):
        target.scatter_update(tf.IndexedSlices(value, rows))


def _summed_rows(gradient, dtype):
    """A sparse gradient with each row once, its slices summed, values in `dtype` (a token
    twice in a batch counts once with its summed gradient, as in the dense gradient)."""
    rows, slot = tf.unique(gradient.indices)
    summed = tf.math.unsorted_segment_sum(gradient.values, slot, tf.shape(rows)[0])
    return tf.IndexedSlices(tf.cast(summed, dtype), rows, gradient.dense_shape)


@keras.saving.register_keras_serializable(package="bert_tf")
class FusedAdamW(keras.optimizers.AdamW):
    """Keras's `AdamW` with fewer passes over memory, and sparse gradients summed per row.

    The step is bound by memory (22.7M floats in MiniLM, half in the embedding table), and
    Keras makes many passes over it: the global norm and the clip scaling each make the
    embedding gradient dense, then the decay and about ten Adam ops read and write every
    variable. On one replica (`fit`, `OneDeviceStrategy`) each variable's clip scale, decay
    and Adam step run as one XLA call, a single pass over its gradient, weight and moments;
    the embedding table's sparse gradient is never made dense (`_adamw_rows_step`), and the
    global norm reads its few rows only. MiniLM's `apply_gradients`: 0.79x the dense one-call
    step, 0.64x Keras's clip and decay with the Adam kernel, ~0.35x Keras's AdamW. On several
    replicas Keras clips and decays, and TensorFlow's `ResourceApplyAdam` kernel does the Adam
    step (XLA on logical CPU devices did not give the one-device weights).

    The formulas are Keras's ("epsilon hat": lr·√(1-β₂ᵗ)/(1-β₁ᵗ) · m / (√v + ε), decay
    `w·wd·lr` first, clip by the global norm). One difference: the slices of a sparse
    gradient (the embedding table's, from `tf.gather`) are summed per row before the step, so
    a token twice in a batch counts once with its summed gradient, as in PyTorch's dense
    gradient; Keras's own step squares each repeated row apart, which is not Adam's second
    moment. AMSGrad falls back to Keras's step. Only the optimizer is compiled; the model's
    graph stays on oneDNN.

    Example:
    >>> v = keras.Variable([1.0, 2.0])
    >>> _ = FusedAdamW(0.1, weight_decay=0.0).apply_gradients([(tf.constant([1.0, -1.0]), v)])
    >>> [round(float(x), 4) for x in v.numpy()]
    [0.9, 2.1]
    """

    def _one_replica(self):
        return not self.amsgrad and tf.distribute.get_strategy().num_replicas_in_sync == 1

    def _clip_gradients(self, grads):
        if self.global_clipnorm and self._one_replica():
            return grads  # scaled inside `_adamw_step` by `_backend_update_step`
        return super()._clip_gradients(grads)

    def _apply_weight_decay(self, variables):
        if not self._one_replica():
            super()._apply_weight_decay(variables)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        if not self._one_replica():
            return super()._backend_update_step(grads, trainable_variables, learning_rate)
        variables = [v.value if isinstance(v, keras.Variable) else v
                     for v in trainable_variables]
        dtype = variables[0].dtype
        cast = lambda value: tf.cast(value, dtype)
        # A sparse gradient (an embedding table's, from `tf.gather`) stays rows; others dense.
        grads = [_summed_rows(g, dtype) if isinstance(g, tf.IndexedSlices) else cast(g)
                 for g in grads]
        scale = tf.ones([], dtype)
        if self.global_clipnorm:
            # Keras's `clip_by_global_norm` as a scale, NaN where the norm is not finite.
            norm = tf.linalg.global_norm(grads)  # a sparse gradient's rows only
            clip_norm = cast(self.global_clipnorm)
            scale = clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm) + (norm - norm)
        constants = [cast(value) for value in (learning_rate, self.iterations + 1, self.beta_1,
                                               self.beta_2, self.epsilon)]
        decay, no_decay = cast(self.weight_decay or 0.0), tf.zeros([], dtype)
        for variable, gradient in zip(variables, grads):
            index = self._get_variable_index(variable)
            slots = (self._momentums[index].value, self._velocities[index].value)
            settings = (scale, decay if self._use_weight_decay(variable) else no_decay,
                        *constants)
            if isinstance(gradient, tf.IndexedSlices):
                _adamw_rows_step(variable, *slots, gradient.indices, gradient.values,
                                 *settings)
            else:
                _adamw_step(variable, *slots, gradient, *settings)

    def update_step(self, gradient, variable, learning_rate):
        if self.amsgrad:
            return super().update_step(gradient, variable, learning_rate)
        dtype = variable.dtype
        index = self._get_variable_index(variable)
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._momentums[index].value.handle,
            v=self._velocities[index].value.handle, beta1_power=tf.pow(beta_1, step),
            beta2_power=tf.pow(beta_2, step), lr=tf.cast(learning_rate, dtype), beta1=beta_1,
            beta2=beta_2, epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.cast(tf.convert_to_tensor(gradient), dtype))


def create_optimizer(name, learning_rate, num_train_steps, num_warmup_steps, weight_decay=0.01,
                     beta_1=0.9, beta_2=0.999, epsilon=1e-6, clip_norm=1.0, dtype="float32"):
    """The BERT optimizer: `adamw` (paper), `lamb` (You et al. 2020, large batches) or `keras_lamb`.

    Args:
      name: `adamw`, `lamb` (tensorflow/models' LAMB) or `keras_lamb` (`keras.optimizers.Lamb`).
      learning_rate: peak learning rate (paper: 1e-4 for pretraining).
      num_train_steps: steps at which the learning rate reaches 0.
      num_warmup_steps: linear warm-up steps (paper: 10,000).
      weight_decay: weight decay, not applied to LayerNorm and bias variables (decoupled for
        AdamW; `lamb`'s `weight_decay_rate`, inside the trust ratio).
      beta_1, beta_2, epsilon: Adam moments (google-research: 0.9, 0.999, 1e-6).
      clip_norm: global-norm gradient clipping; None for none.
      dtype: the run's dtype policy; `mixed_float16` wraps the optimizer in Keras's dynamic
        `LossScaleOptimizer` (the train loop then scales the loss).

    Returns:
      A Keras optimizer whose `learning_rate` is a `WarmupLinearDecay` of its `iterations`.

    Example:
    >>> optimizer = create_optimizer("adamw", 1e-4, 1000, 100)
    >>> type(optimizer).__name__
    'FusedAdamW'
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {name!r}; choose one of {list(OPTIMIZERS)}.")
    schedule = WarmupLinearDecay(learning_rate, num_train_steps, num_warmup_steps)
    common = dict(learning_rate=schedule, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                  global_clipnorm=clip_norm)
    if name == "lamb":
        optimizer = Lamb(weight_decay_rate=weight_decay,
                         exclude_from_weight_decay=list(NO_WEIGHT_DECAY), **common)
    else:
        optimizer_class = FusedAdamW if name == "adamw" else keras.optimizers.Lamb
        optimizer = optimizer_class(weight_decay=weight_decay, **common)
        optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    if dtype == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def inner_optimizer(optimizer):
    """The optimizer that owns the schedule and slots (inside a `LossScaleOptimizer`)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


def current_learning_rate(optimizer):
    """The learning rate the next update will use (a float tensor)."""
    inner = inner_optimizer(optimizer)
    rate = inner.learning_rate
    return rate(inner.iterations) if callable(rate) else tf.convert_to_tensor(rate)
