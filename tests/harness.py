"""The shared test harness every public layer and model goes through (as keras-hub's).

`run_harness(build, inputs, expected_shapes, tmp_path)` checks, for an object from `build()`
(and one more per mixed policy):

- config round trip: `from_config(get_config())` gives the same config and, with the same
  weights, the same outputs;
- symbolic and eager calls agree on shapes and dtypes, and match `expected_shapes`;
- `fit` steps give finite losses and move every trainable weight;
- under `mixed_bfloat16` and `mixed_float16` variables stay float32, outputs come in the
  compute dtype (or float32 where `float32_outputs`, as the heads document) and stay within
  the format's precision of the float32 outputs; under mixed_float16, whose `fit` takes
  another path (loss scaling), `fit` moves every trainable weight. A bfloat16 `fit` runs
  float16's step with another compute dtype and no loss scale: the task tests
  (keras_tasks, finetuning) and the pretraining runs train under mixed_bfloat16;
- a `.keras` save/load of the trained float32 model gives the same class and equal outputs.

`inputs` is a tuple of positional call arguments (layers) or one structure (models).
"""

import warnings

import keras
import numpy as np
import tensorflow as tf

from bert_tf.dtype_policy import policy_scope

MIXED_POLICIES = ("mixed_bfloat16", "mixed_float16")
# Largest error against float32, relative to the output scale: bfloat16 keeps 8 mantissa
# bits, float16 11, and a few layers of rounding accumulate.
TOLERANCE = {"mixed_bfloat16": 0.1, "mixed_float16": 0.02}


def run_harness(build, inputs, expected_shapes, tmp_path, float32_outputs=False,
                unserialized=None, untrained=(), saving=True):
    """Runs every check.

    `unserialized`: constructor arguments the config leaves out, given back to `from_config`.
    `untrained`: path prefixes of weights the outputs do not depend on (e.g. the pooler of a
    token classifier); `fit` must leave exactly these unchanged.

    One float32 object serves the float32 checks: its initial weights are the reference of the
    config clone and of the mixed precision copies, then `fit` trains it and the trained model
    is saved (a `build()` per check cost a model build each, and a fresh one proves no more).
    """
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    obj = build()
    outputs = check_calls(obj, args, expected_shapes)
    check_config_round_trip(obj, args, unserialized or {})
    for policy in MIXED_POLICIES:
        check_mixed_precision(build, obj, args, policy, float32_outputs, untrained)
    model = check_fit(obj, args, outputs, untrained)
    if saving:
        check_saving(model, obj, args, tmp_path)


def _numpy(structure):
    return tf.nest.map_structure(lambda t: np.asarray(t, np.float32), structure)


def _assert_all_close(actual, expected, **tolerance):
    tf.nest.assert_same_structure(actual, expected)
    for a, e in zip(tf.nest.flatten(_numpy(actual)), tf.nest.flatten(_numpy(expected))):
        np.testing.assert_allclose(a, e, **tolerance)


def _symbolic(args):
    return tf.nest.map_structure(lambda t: keras.Input(batch_shape=t.shape, dtype=t.dtype), args)


def _model(obj, args):
    """`obj` itself if it is a model, else a functional model around the layer."""
    if isinstance(obj, keras.Model):
        return obj
    symbolic = _symbolic(args)
    return keras.Model(list(symbolic), obj(*symbolic))


def _model_inputs(obj, args):
    return args[0] if isinstance(obj, keras.Model) else list(args)


def check_calls(obj, args, expected_shapes):
    """Eager and symbolic calls give `expected_shapes` and the same dtypes."""
    eager = obj(*args)
    symbolic = obj(*_symbolic(args))
    shapes = lambda structure: tf.nest.map_structure(lambda t: tuple(t.shape), structure)
    dtypes = lambda structure: tf.nest.map_structure(lambda t: tf.as_dtype(t.dtype), structure)
    assert shapes(eager) == expected_shapes, shapes(eager)
    # A symbolic dimension may be unknown (a reshape to [-1, ...]), never different.
    tf.nest.assert_same_structure(symbolic, eager)
    for known, actual in zip(tf.nest.flatten(symbolic), tf.nest.flatten(eager)):
        assert tf.TensorShape(known.shape).is_compatible_with(actual.shape), known.shape
    assert dtypes(symbolic) == dtypes(eager)
    return eager


def check_config_round_trip(obj, args, unserialized):
    """The clone has the same config and, given the same weights, the same outputs."""
    expected = obj(*args)
    config = obj.get_config()
    clone = type(obj).from_config({**config, **unserialized})
    assert clone.get_config() == config
    clone(*args)
    clone.set_weights(obj.get_weights())
    _assert_all_close(clone(*args), expected, atol=1e-6)


def check_fit(obj, args, outputs, untrained=()):
    """Two `fit` steps towards random targets: finite losses; every trainable weight moves
    except the `untrained` ones.

    Zero targets would not do: a LayerNorm output's squared norm is fixed, so the loss would
    not depend on anything before it. Two steps, because under mixed_float16 the first step
    may overflow at the initial loss scale of 2¹⁵ and be skipped, by design.
    """
    model = _model(obj, args)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = [w.numpy().copy() for w in model.trainable_weights]
    rng = np.random.default_rng(0)
    targets = tf.nest.map_structure(lambda t: rng.normal(size=t.shape), _numpy(outputs))
    # Keras's TensorFlow trainer builds the optimizer (a loss scale's variables) and the loss
    # tracker of each output inside the first traced step, and a tf.function whose first trace
    # makes variables traces again. Built first (as BertTaskModel.fit builds its optimizer),
    # the step is traced once.
    model.optimizer.build(model.trainable_variables)
    model.compute_loss(y=targets, y_pred=outputs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Gradients do not exist", UserWarning)
        history = model.fit(_model_inputs(obj, args), targets,
                            batch_size=len(tf.nest.flatten(args)[0]), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history["loss"]
    unchanged = [w.path for w, old in zip(model.trainable_weights, before)
                 if np.array_equal(w.numpy(), old)]
    expected = [w.path for w in model.trainable_weights if w.path.startswith(untrained)]
    assert unchanged == expected, f"fit left unchanged {unchanged}; expected {expected}"
    return model


def check_mixed_precision(build, reference, args, policy, float32_outputs, untrained=()):
    """Float32 variables, outputs in the documented dtype and close to those of `reference`
    (a float32 object); under mixed_float16, `fit` steps with loss scaling."""
    # Called now: a layer shared between builds (MaskedLMHead's word table) may have been
    # trained by the previous policy's fit.
    expected = _numpy(reference(*args))
    with policy_scope(policy):
        obj = build()
        obj(*args)
        obj.set_weights(reference.get_weights())
        assert all(w.dtype == "float32" for w in obj.weights), policy
        outputs = obj(*args)
        dtype = tf.float32 if float32_outputs else keras.DTypePolicy(policy).compute_dtype
        for output in tf.nest.flatten([outputs, obj(*_symbolic(args))]):
            assert tf.as_dtype(output.dtype) == dtype, (policy, output)
        scale = max(1.0, max(np.abs(e).max() for e in tf.nest.flatten(expected)))
        _assert_all_close(outputs, expected, atol=TOLERANCE[policy] * scale)
        if policy == "mixed_float16":
            model = check_fit(obj, args, outputs, untrained)
            assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer), model.optimizer


def check_saving(model, obj, args, tmp_path):
    """A `.keras` file of `model` (`obj` or a model around it) loads as the same class with
    equal outputs."""
    inputs = _model_inputs(obj, args)
    expected = model(inputs)
    path = str(tmp_path / "harness.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is type(model)
    assert any(type(layer) is type(obj) for layer in [loaded, *loaded.layers])
    _assert_all_close(loaded(inputs), expected, atol=1e-6)
