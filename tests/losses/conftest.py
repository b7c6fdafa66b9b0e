"""The losses' reference: sentence-transformers' values on fixed embeddings, and numpy's."""

import os

import numpy as np
import pytest

from tests.fixtures import TESTDATA


@pytest.fixture(scope="module")
def reference():
    """tests/testdata/losses/contrastive_losses.npz (dev/make_contrastive_loss_fixtures.py)."""
    return dict(np.load(os.path.join(TESTDATA, "losses", "contrastive_losses.npz")))


def numpy_ranking_loss(columns, scale=20.0, symmetric=False):
    """Mean InfoNCE over in-batch negatives, written out in float64 numpy."""
    unit = [c / np.linalg.norm(c, axis=1, keepdims=True) for c in np.float64(columns)]
    anchors, candidates = unit[0], np.concatenate(unit[1:])
    losses = []
    for i, anchor in enumerate(anchors):
        scores = scale * candidates @ anchor
        forward = np.log(np.exp(scores).sum()) - scores[i]
        if symmetric:
            back = scale * anchors @ unit[1][i]
            forward = (forward + np.log(np.exp(back).sum()) - scores[i]) / 2
        losses.append(forward)
    return float(np.mean(losses))
