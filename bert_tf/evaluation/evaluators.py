"""Evaluators that embed with a model and score, and the Keras callback that runs them per epoch.

An evaluator holds its data and is called with a model that embeds texts through
`predict(texts)` (a `SentenceEncoder`): `STSEvaluator` gives `sts_scores`, `RetrievalEvaluator`
`retrieval_scores`, each name-prefixed (`sts_spearman_cosine`, `retrieval_ndcg@10`).
`EmbeddingEvaluation` runs them after every epoch of `fit`, adds the scores to the epoch's logs
(so `History`, TensorBoard and the progress bar have them) and logs one line per evaluator
(absl `logging.info`, or the `log` callable an entry point passes).

Example:
>>> sts = STSEvaluator(first, second, gold, name="sts_dev")        # doctest: +SKIP
>>> encoder.fit(pairs, epochs=3, callbacks=[EmbeddingEvaluation([sts])])  # doctest: +SKIP
>>> sts(encoder)["sts_dev_spearman_cosine"]                          # doctest: +SKIP
0.84
"""

import keras
import numpy as np
from absl import logging

from bert_tf.evaluation.retrieval import retrieval_scores
from bert_tf.evaluation.similarity import sts_scores

# The scores each evaluator's log line shows (all go into the epoch's logs).
STS_HEADLINE = ("spearman_cosine", "pearson_cosine")
RETRIEVAL_HEADLINE = ("ndcg@10", "mrr@10", "recall@100")


def embed(model, texts, batch_size):
    """`[len(texts), H]` float32 embeddings of `texts` by `model.predict`."""
    return np.asarray(model.predict(list(texts), batch_size=batch_size, verbose=0),
                      dtype=np.float32)


class STSEvaluator:
    """Spearman and Pearson of cosine similarity against gold scores (`sts_scores`).

    Args:
      sentences1, sentences2: the pairs' texts.
      gold: their gold similarity scores.
      name: the prefix of the scores' keys.
      batch_size: texts per `predict` batch.

    Example:
    >>> STSEvaluator(["A man plays."], ["A man sings."], [3.0])  # doctest: +SKIP
    """

    headline = STS_HEADLINE

    def __init__(self, sentences1, sentences2, gold, name="sts", batch_size=64):
        self.sentences1, self.sentences2 = list(sentences1), list(sentences2)
        self.gold = np.asarray(gold, dtype=np.float64)
        self.name, self.batch_size = name, batch_size

    def __call__(self, model):
        scores = sts_scores(embed(model, self.sentences1, self.batch_size),
                            embed(model, self.sentences2, self.batch_size), self.gold)
        return {f"{self.name}_{key}": value for key, value in scores.items()}


class RetrievalEvaluator:
    """nDCG, MRR, recall, ... of queries against a corpus (`retrieval_scores`).

    Args:
      data: a `RetrievalData`.
      name: the prefix of the scores' keys.
      batch_size: texts per `predict` batch.
      cutoffs: {metric: ks} beside `retrieval.DEFAULT_CUTOFFS`.

    Example:
    >>> RetrievalEvaluator(data)(encoder)["retrieval_ndcg@10"]  # doctest: +SKIP
    0.87
    """

    headline = RETRIEVAL_HEADLINE

    def __init__(self, data, name="retrieval", batch_size=64, cutoffs=None):
        self.data, self.name, self.batch_size, self.cutoffs = data, name, batch_size, cutoffs

    def __call__(self, model):
        scores = retrieval_scores(self.data, embed(model, self.data.query_texts, self.batch_size),
                                  embed(model, self.data.corpus_texts, self.batch_size),
                                  self.cutoffs)
        return {f"{self.name}_{key}": value for key, value in scores.items()}


def headline(evaluator, scores):
    """`name: key value, ...` of an evaluator's headline scores."""
    shown = [f"{key} {scores[f'{evaluator.name}_{key}']:.4f}" for key in evaluator.headline
             if f"{evaluator.name}_{key}" in scores]
    return f"{evaluator.name}: {', '.join(shown)}"


class EmbeddingEvaluation(keras.callbacks.Callback):
    """Runs evaluators after each epoch; their scores join the epoch's logs.

    Args:
      evaluators: `STSEvaluator`s and `RetrievalEvaluator`s (any callable model -> dict).
      model: the model to embed with; default the model being fit.
      log: called with one line per evaluator and epoch; default absl `logging.info`.

    Example:
    >>> encoder.fit(pairs, epochs=2, callbacks=[EmbeddingEvaluation([sts])])  # doctest: +SKIP
    epoch 1: sts: spearman_cosine 0.8199, pearson_cosine 0.8269
    """

    def __init__(self, evaluators, model=None, log=None):
        super().__init__()
        self.evaluators = list(evaluators)
        self.embedding_model = model
        self.log = log or logging.info
        self.scores_by_epoch = []  # every epoch's scores, in order

    def evaluate(self):
        """{key: score} of every evaluator on the model now."""
        scores = {}
        for evaluator in self.evaluators:
            scores.update(evaluator(self.embedding_model or self.model))
        return scores

    def on_epoch_end(self, epoch, logs=None):
        scores = self.evaluate()
        self.scores_by_epoch.append(scores)
        if logs is not None:
            logs.update(scores)
        for evaluator in self.evaluators:
            self.log(f"epoch {epoch + 1}: {headline(evaluator, scores)}")
