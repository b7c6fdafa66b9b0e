"""Hard negatives for contrastive training: each anchor's nearest positives that are not its own.

`mine_hard_negatives(pairs, embed, options)` follows sentence-transformers'
`mine_hard_negatives` ("top" sampling, triplets out): the corpus is the pairs' distinct
positives; each anchor is scored against it by cosine similarity (`evaluation.nearest`, exact,
in blocks, so memory stays flat); its own positives and its own text are never negatives; the
candidates ranked `range_min` to `range_max` are kept, less those scoring above `max_score` or
within `margin` of the anchor's positive (near-duplicates, likely false negatives); the best
`num_negatives` of what is left each make one `(anchor, positive, negative)` row. A pair left
without a negative is dropped and counted.

The texts are embedded by `embed(texts) -> [N, H]`: `in_process_embedder` (a `SentenceEncoder`
in this process), or `beam_embedder`, which runs the corpus command of `tools/predict.py`
(docs/corpus_inference.md) over them on any Beam runner, for corpora one process embeds too
slowly.

Example:
>>> rows, counts = mine_hard_negatives(pairs, in_process_embedder("minilm/"),
...                                    MiningOptions(num_negatives=3, range_min=10,
...                                                  margin=0.05))  # doctest: +SKIP
>>> counts["pairs_without_negative"]                                 # doctest: +SKIP
2
"""

import collections
import csv
import dataclasses
import glob
import json
import os
import tempfile

import numpy as np
from absl import logging

from bert_tf.errors import UserError
from bert_tf.evaluation.nearest import nearest
from bert_tf.finetuning.table_reader import file_format, read_rows
from bert_tf.options import option


class MiningError(UserError, ValueError):
    """Mining options or pairs that cannot give negatives."""


@dataclasses.dataclass
class MiningOptions:
    """sentence-transformers' `mine_hard_negatives` settings (its `absolute_margin` is
    `margin`)."""

    num_negatives: int = option(1, "Negatives per pair; each makes one (anchor, positive, "
                                "negative) row.", lower_bound=1)
    range_min: int = option(0, "Skip the first this many candidates (the closest, most likely "
                            "unlabelled positives).", lower_bound=0)
    range_max: int = option(None, "Consider candidates up to this rank only (default: "
                            "range_min + num_negatives, times 10 with --margin or --max_score).",
                            lower_bound=1)
    margin: float = option(None, "Keep a candidate only if it scores at least this much below "
                           "the anchor's positive (sentence-transformers' absolute_margin).")
    max_score: float = option(None, "Keep a candidate only if its cosine similarity to the "
                              "anchor is at most this.")

    def depth(self):
        """The candidates to rank per anchor: `range_max`, else sentence-transformers'
        default (room for skipped candidates when a margin or score cap applies)."""
        if self.range_max is not None:
            if self.range_max < self.range_min + self.num_negatives:
                raise MiningError(f"--range_max={self.range_max} leaves fewer than "
                                  f"--num_negatives={self.num_negatives} candidates after "
                                  f"--range_min={self.range_min}.")
            return self.range_max
        filtered = self.margin is not None or self.max_score is not None
        return self.range_min + self.num_negatives * (10 if filtered else 1)


def _distinct(texts):
    """(distinct texts in first-seen order, index of each text among them)."""
    positions = {}
    for text in texts:
        positions.setdefault(text, len(positions))
    return list(positions), np.array([positions[text] for text in texts], dtype=np.int64)


def mine_hard_negatives(pairs, embed, options):
    """`(rows, counts)`: `(anchor, positive, negative)` rows mined for `pairs`.

    Args:
      pairs: `(anchor, positive)` text pairs.
      embed: `texts -> [len(texts), H]` embeddings (`in_process_embedder`, `beam_embedder`).
      options: a `MiningOptions`.

    Returns:
      The rows (pair order; a pair's negatives best first), and counts: `pairs`,
      `pairs_without_negative`, `triplets`, `skipped_by_margin`, `skipped_by_max_score`.

    Raises:
      MiningError: fewer than two distinct positives, or a `range_max` below
        `range_min + num_negatives`.
    """
    anchors, positives = [a for a, _ in pairs], [p for _, p in pairs]
    corpus, positive_index = _distinct(positives)
    if len(corpus) < 2:
        raise MiningError(f"{len(corpus)} distinct positive(s): a negative is another pair's "
                          "positive, so mining needs at least two.")
    depth = options.depth()
    # An anchor's own positives (it may have several) and its own text come out of its
    # candidates, so rank that many more.
    own = collections.defaultdict(set)
    for anchor, index in zip(anchors, positive_index):
        own[anchor].add(int(index))
    corpus_index = {text: i for i, text in enumerate(corpus)}
    for anchor in own:
        if anchor in corpus_index:
            own[anchor].add(corpus_index[anchor])
    distinct_anchors, anchor_index = _distinct(anchors)
    extra = max(len(indices) for indices in own.values())
    logging.info("embedding %d distinct anchors and %d distinct positives", len(distinct_anchors),
                 len(corpus))
    embeddings = embed(distinct_anchors + corpus)
    anchor_embeddings, corpus_embeddings = (embeddings[:len(distinct_anchors)],
                                            embeddings[len(distinct_anchors):])
    scores, hits = nearest(anchor_embeddings, corpus_embeddings, depth + extra)
    unit = corpus_embeddings / np.maximum(np.linalg.norm(corpus_embeddings, axis=1,
                                                         keepdims=True), 1e-12)
    counts = collections.Counter(pairs=len(pairs))
    rows = []
    for (anchor, positive), a, p in zip(pairs, anchor_index, positive_index):
        candidates = [(score, hit) for score, hit in zip(scores[a], hits[a])
                      if hit not in own[anchor]][options.range_min:depth]
        query = anchor_embeddings[a] / max(np.linalg.norm(anchor_embeddings[a]), 1e-12)
        positive_score = float(query @ unit[p])
        negatives = []
        for score, hit in candidates:
            if options.max_score is not None and score > options.max_score:
                counts["skipped_by_max_score"] += 1
            elif options.margin is not None and score + options.margin > positive_score:
                counts["skipped_by_margin"] += 1
            else:
                negatives.append(corpus[hit])
            if len(negatives) == options.num_negatives:
                break
        if not negatives:
            counts["pairs_without_negative"] += 1
        rows += [(anchor, positive, negative) for negative in negatives]
    counts["triplets"] = len(rows)
    return rows, counts


def in_process_embedder(model, batch_size=64, max_seq_length=None):
    """`embed` by a `SentenceEncoder` of `model` (any folder it reads) in this process."""
    from bert_tf.keras_tasks import SentenceEncoder

    encoder = SentenceEncoder.from_pretrained(model, max_seq_length=max_seq_length)

    def embed(texts):
        return np.asarray(encoder.predict(texts, batch_size=batch_size, verbose=0), np.float32)

    return embed


def beam_embedder(settings, beam_pipeline_options=None, num_shards=1):
    """`embed` by `predict_corpus` (the corpus command, `tools/predict.py`) on Beam.

    Args:
      settings: a `predictor.PredictSettings` (its `model`; `head` is set to encoder).
      beam_pipeline_options: Beam options as `name=value,...`.
      num_shards: result shards.
    """
    from bert_tf.corpus_inference import readers
    from bert_tf.corpus_inference.corpus_predictions import predict_corpus

    def embed(texts):
        with tempfile.TemporaryDirectory(prefix="bert_tf_mining_") as folder:
            corpus = os.path.join(folder, "texts.jsonl")
            with open(corpus, "w", encoding="utf-8") as f:
                f.writelines(json.dumps({"id": i, "text": text}) + "\n"
                             for i, text in enumerate(texts))
            output = os.path.join(folder, "embeddings")
            predict_corpus(corpus, output, dataclasses.replace(settings, head="encoder"),
                           output_format="jsonl", num_shards=num_shards,
                           reader=readers.LineReader(id_column="id"),
                           beam_pipeline_options=beam_pipeline_options)
            rows = {}
            for path in sorted(glob.glob(os.path.join(output, "*.jsonl"))):
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        record = json.loads(line)
                        rows[int(record["id"])] = record["embedding"]
        return np.asarray([rows[i] for i in range(len(texts))], dtype=np.float32)

    return embed


def read_pairs(path, anchor_column="anchor", positive_column="positive"):
    """`(pairs, skipped)`: the `(anchor, positive)` rows of a TSV, CSV or JSONL file, and how
    many rows were skipped for an empty anchor or positive.

    Raises:
      DataError: a missing file or column (the row's columns named).
    """
    pairs, skipped = [], 0
    for _, row in read_rows(path, columns=(anchor_column, positive_column)):
        anchor, positive = str(row[anchor_column]).strip(), str(row[positive_column]).strip()
        if anchor and positive:
            pairs.append((anchor, positive))
        else:
            skipped += 1
    return pairs, skipped


def write_triplets(path, rows, columns):
    """Writes `(anchor, positive, negative)` rows under `columns`, as TSV, CSV or JSONL by
    `path`'s extension."""
    kind = file_format(path)
    with open(path, "w", encoding="utf-8", newline="") as f:
        if kind == "jsonl":
            f.writelines(json.dumps(dict(zip(columns, row)), ensure_ascii=False) + "\n"
                         for row in rows)
            return
        writer = (csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
                  if kind == "tsv" else csv.writer(f))
        writer.writerow(columns)
        writer.writerows(rows)
