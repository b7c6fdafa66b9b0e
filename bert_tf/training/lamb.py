"""LAMB as validated at batch 32k-65k: tensorflow/models' and NVIDIA's, as a Keras 3 optimizer.

LAMB (You et al. 2020) is Adam whose step is rescaled per variable by the trust ratio
‖w‖ / ‖update‖. The paper, tensorflow/models (`official/modeling/optimization/lamb.py`) and
NVIDIA's NVLAMB, the versions that trained BERT at batch 32k-65k, put the weight decay inside
the update before the trust ratio and skip both decay and the ratio for LayerNorm and bias
variables. `keras.optimizers.Lamb` does neither: its decay is Keras's decoupled
`w -= lr·wd·w` outside the ratio, and it adapts every variable. For each variable `w` with
gradient `g`, step `t` (1-based) and learning rate `lr`, this class computes:

    m = β₁·m + (1-β₁)·g          v = β₂·v + (1-β₂)·g²
    update = (m / (1-β₁ᵗ)) / (√(v / (1-β₂ᵗ)) + ε) + weight_decay_rate·w   (decay: not excluded)
    ratio = ‖w‖ / ‖update‖ if both norms > 0 else 1                      (adapted: not excluded)
    w -= lr · ratio · update

Names are matched as Keras matches `exclude_from_weight_decay(var_names=...)` (the rule
AdamW uses in `optimization.py`): a variable is excluded when a pattern `re.search`es its
short Keras name (`kernel`, `bias`, `gamma`, `beta`, `embeddings`).
"""

import re

import keras
import tensorflow as tf


def matches_any(name, patterns):
    """Whether a regex of `patterns` occurs in `name` (Keras's and tensorflow/models' rule).

    Example:
    >>> matches_any("gamma", ("bias", "gamma")), matches_any("kernel", ("bias", "gamma"))
    (True, False)
    """
    return any(re.search(pattern, name) is not None for pattern in patterns or ())


@keras.saving.register_keras_serializable(package="bert_tf")
class Lamb(keras.optimizers.Optimizer):
    """LAMB with tensorflow/models' update: decay inside the trust ratio, exclusions by name.

    Args:
      learning_rate: a float, a `LearningRateSchedule` of `iterations`, or a callable.
      beta_1, beta_2: decay rates of the Adam moments (bias-corrected).
      epsilon: added to √v̂ (tensorflow/models: 1e-6).
      weight_decay_rate: decay added to the update (before the trust ratio).
      exclude_from_weight_decay: regexes; a variable whose name contains a match is not
        decayed. None decays every variable (as tensorflow/models).
      exclude_from_layer_adaptation: regexes; a variable whose name contains a match takes
        the plain (ratio 1) step. None (or empty): the same as `exclude_from_weight_decay`.
      name: the optimizer's name.
      **kwargs: Keras's common optimizer arguments (`global_clipnorm`, `clipnorm`, ...), but
        not Keras's `weight_decay`, which would decay a second time outside the ratio.

    Example:
    >>> kernel, bias = keras.Variable([3.0, 4.0], name="kernel"), keras.Variable([0.0], name="bias")
    >>> optimizer = Lamb(0.1, weight_decay_rate=0.01, exclude_from_weight_decay=["bias"])
    >>> _ = optimizer.apply_gradients([(tf.constant([1.0, 1.0]), kernel),
    ...                                (tf.constant([1.0]), bias)])
    >>> [round(float(x), 4) for x in kernel.numpy()], [round(float(x), 4) for x in bias.numpy()]
    ([2.6482, 3.6447], [-0.1])
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 weight_decay_rate=0.0, exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, name="lamb", **kwargs):
        if kwargs.get("weight_decay") is not None:
            raise ValueError("Lamb decays inside the trust ratio: pass weight_decay_rate, not "
                             f"Keras's weight_decay={kwargs['weight_decay']}.")
        kwargs.pop("weight_decay", None)
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.weight_decay_rate = weight_decay_rate
        self._decay_excluded = tuple(exclude_from_weight_decay or ())
        # As tensorflow/models: no layer-adaptation list means the weight-decay list.
        self._adaptation_excluded = tuple(exclude_from_layer_adaptation or self._decay_excluded)

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        raise ValueError("Lamb takes its exclusions as constructor arguments "
                         "(exclude_from_weight_decay=, exclude_from_layer_adaptation=).")

    def decays(self, variable):
        """Whether `weight_decay_rate·w` joins the update of `variable` (a Keras variable)."""
        return not matches_any(variable.name, self._decay_excluded)

    def adapts(self, variable):
        """Whether the trust ratio scales the step of `variable` (a Keras variable)."""
        return not matches_any(variable.name, self._adaptation_excluded)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = [self.add_variable_from_reference(v, "m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, "v") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        # Under tf.distribute, `variable` is one device's component: the decisions by name
        # come from the Keras variable the optimizer was built on.
        index = self._get_variable_index(variable)
        reference = self._trainable_variables[index]
        dtype = variable.dtype
        # A sparse gradient becomes dense: tensorflow/models' sparse path also decays the
        # moments of every row and takes both norms over the whole variable.
        gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)
        lr = tf.cast(learning_rate, dtype)
        step = tf.cast(self.iterations + 1, dtype)
        beta_1 = tf.cast(self.beta_1, dtype)
        beta_2 = tf.cast(self.beta_2, dtype)
        m, v = self._m[index], self._v[index]

        # 1. Adam moments, bias-corrected.
        m_t = m * beta_1 + gradient * (1.0 - beta_1)
        v_t = v * beta_2 + tf.square(gradient) * (1.0 - beta_2)
        self.assign(m, m_t)
        self.assign(v, v_t)
        m_hat = m_t / (1.0 - tf.pow(beta_1, step))
        v_hat = v_t / (1.0 - tf.pow(beta_2, step))
        update = m_hat / (tf.sqrt(v_hat) + tf.cast(self.epsilon, dtype))
        weights = tf.convert_to_tensor(variable)
        # 2. Weight decay inside the update, so the trust ratio sees it.
        if self.decays(reference):
            update += tf.cast(self.weight_decay_rate, dtype) * weights
        # 3. Trust ratio ‖w‖ / ‖update‖; 1 when either norm is 0 or the variable is excluded.
        ratio = 1.0
        if self.adapts(reference):
            w_norm, u_norm = tf.norm(weights), tf.norm(update)
            ratio = tf.where((w_norm > 0) & (u_norm > 0), tf.math.divide_no_nan(w_norm, u_norm),
                             tf.ones_like(w_norm))
        self.assign_sub(variable, ratio * lr * update)

    def get_config(self):
        config = super().get_config()
        config.update({
            "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
            "weight_decay_rate": self.weight_decay_rate,
            "exclude_from_weight_decay": list(self._decay_excluded),
            "exclude_from_layer_adaptation": list(self._adaptation_excluded),
        })
        return config
