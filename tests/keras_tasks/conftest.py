"""Fixtures of the Keras task model tests: a tiny model directory with a real vocab, texts."""

import contextlib

import numpy as np

from bert_tf.dtype_policy import policy_scope
from bert_tf.training.distribution import get_strategy
from tests.checkpoints.conftest import tiny_hf_dir  # noqa: F401  (a shared fixture)

# Short real sentences; labels: 1 iff the text is about music (learnable from words).
TEXTS = ["The band played a new song tonight.", "Stocks fell sharply on Monday.",
         "She sang the chorus twice.", "The bank raised interest rates.",
         "Guitar and drums filled the hall.", "Markets rallied after the report.",
         "The orchestra tuned before the concert.", "Shares of the firm dropped."]
LABELS = [1, 0, 1, 0, 1, 0, 1, 0]


@contextlib.contextmanager
def _setting(name):
    if name == "mirrored":
        # The project's strategy: over the two logical CPUs it reduces on one device, since
        # a second collective-op MirroredStrategy in one process fails (reused instance keys).
        with get_strategy("mirrored").scope():
            yield
    else:
        with policy_scope(name):
            yield


def fit_under(setting, build, fit):
    """Builds (and compiles) a model under `setting`, "mirrored" (MirroredStrategy over the two
    logical CPUs) or a dtype policy name, runs `fit(model)` there; returns the model and fit's
    history after checking the loss is finite and every trainable weight with a gradient
    (all but the unused pooler) moved."""
    with _setting(setting):
        model = build()
        before = {w.path: np.array(w.numpy()) for w in model.trainable_weights}
        history = fit(model)
    assert np.all(np.isfinite(history.history["loss"])), history.history
    unchanged = [w.path for w in model.trainable_weights
                 if "pooler" not in w.path and np.array_equal(before[w.path], w.numpy())]
    assert not unchanged, unchanged
    if setting == "mirrored":
        assert model.distribute_strategy.num_replicas_in_sync == 2
    else:
        assert model.encoder.dtype_policy.name == setting
    return model, history
