r"""Dev-only: sentence-transformers' contrastive loss values on fixed embeddings, for tests/losses.

Runs in the reference venv (torch + sentence-transformers, no TensorFlow):

  .venv-ref/bin/python dev/make_contrastive_loss_fixtures.py \
      --output=tests/testdata/losses/contrastive_losses.npz

Seeded random embeddings (8 rows, 32 wide: anchors, positives, one hard negative each) go
through sentence-transformers' own losses, called on embeddings (no model is needed):
`MultipleNegativesRankingLoss.compute_loss_from_embeddings` (plain, with the negative column,
symmetric on pairs: directions query_to_doc + doc_to_query, per_direction, and scale 10),
`CachedMultipleNegativesRankingLoss.calculate_loss` over mini-batches of 3, and
`MatryoshkaLoss`'s value: its `shrink` (truncate + renormalize) at dims 32/16/8 with weights
1/0.5/0.25 into the plain loss, weighted and summed as its forward does. The plain loss's
gradients with respect to each embedding column are stored too.
"""

import argparse
import os

import numpy as np
import torch
from sentence_transformers.sentence_transformer.losses import (
    CachedMultipleNegativesRankingLoss,
    MultipleNegativesRankingLoss,
)
from sentence_transformers.sentence_transformer.losses.matryoshka import shrink

ROWS, WIDTH = 8, 32
SYMMETRIC = {"directions": ("query_to_doc", "doc_to_query"), "partition_mode": "per_direction"}
MATRYOSHKA_DIMS, MATRYOSHKA_WEIGHTS = (32, 16, 8), (1.0, 0.5, 0.25)


def _value(loss, columns):
    return float(loss.compute_loss_from_embeddings([torch.tensor(c) for c in columns], None))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(63)
    anchors, positives, negatives = (rng.standard_normal((ROWS, WIDTH)).astype(np.float32)
                                     for _ in range(3))
    positives = (0.3 * anchors + positives).astype(np.float32)  # related, not near-equal
    pair, triplet = (anchors, positives), (anchors, positives, negatives)
    plain = MultipleNegativesRankingLoss(None)
    out = {"anchors": anchors, "positives": positives, "negatives": negatives,
           "mnrl": _value(plain, pair), "mnrl_negatives": _value(plain, triplet),
           "mnrl_scale_10": _value(MultipleNegativesRankingLoss(None, scale=10.0), pair),
           "symmetric": _value(MultipleNegativesRankingLoss(None, **SYMMETRIC), pair)}
    cached = CachedMultipleNegativesRankingLoss(
        torch.nn.Sequential(torch.nn.Identity()), mini_batch_size=3)  # a stand-in model
    reps = [list(torch.tensor(c).split(3)) for c in triplet]
    out["cached_negatives"] = float(cached.calculate_loss(reps))
    out["matryoshka_negatives"] = sum(
        weight * float(plain.compute_loss_from_embeddings(
            [shrink(torch.tensor(c), dim) for c in triplet], None))
        for dim, weight in zip(MATRYOSHKA_DIMS, MATRYOSHKA_WEIGHTS))
    leaves = [torch.tensor(c, requires_grad=True) for c in triplet]
    plain.compute_loss_from_embeddings(leaves, None).backward()
    for name, leaf in zip(("anchors", "positives", "negatives"), leaves):
        out[f"mnrl_negatives_grad_{name}"] = leaf.grad.numpy()
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    np.savez(args.output, **{k: np.asarray(v) for k, v in out.items()})
    print({k: v for k, v in out.items() if np.ndim(v) == 0})


if __name__ == "__main__":
    main()
