"""Contrastive training of a `SentenceEncoder` on (anchor, positive[, negative]) text pairs.

`compile(loss=MultipleNegativesRankingLoss())` then `fit({"anchor": [...], "positive": [...]})`
as sentence-transformers' trainer takes a pairs dataset. Batches never hold the same text twice
(sentence-transformers' NO_DUPLICATES batch sampler: a repeated text is a false negative, the
loss pushing a text away from itself); each batch is a `[b, C]` block of texts tokenized to ids
`[b, C, S]`, one row per pair, so a strategy splitting the batch across replicas keeps rows
whole. The train step (`losses.contrastive_gradients`) embeds the C·b texts in one encoder
call, gathers the embeddings across replicas and ranks them. `run_sentence_embeddings` trains
from the same batches (`epoch_batches`) in the package's own loop.
"""

import itertools
import warnings

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.data.autotune import without_autotune
from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.keras_tasks.text_task import TextTask
from bert_tf.layers.traced_call import traced_call
from bert_tf.losses.contrastive_gradients import contrastive_loss_and_gradients, random_state
from bert_tf.losses.ranking import describe

COLUMNS = ("anchor", "positive", "negative")


def is_ranking_loss(loss):
    """Whether `loss` is one of `bert_tf.losses`' ranking losses (trained by the step below)."""
    return hasattr(loss, "ranking_losses")


def pair_rows(columns, loss=None, where="x"):
    """Rows of texts `(anchor, positive[, negative])` from `{column: texts}`, and how many
    rows were skipped for an empty anchor or positive (an empty negative is an error).

    Raises:
      TaskInputError: no anchor or positive column, an unknown column, columns of unequal
        length, a non-text, a negative column with a loss that takes none, no row left.
    """
    names = [name for name in COLUMNS if name in columns]
    unknown = sorted(set(columns) - set(COLUMNS))
    if unknown or names[:2] != ["anchor", "positive"]:
        raise TaskInputError(f"`{where}` must hold the columns \"anchor\" and \"positive\" "
                             f"(and optionally \"negative\"); it has {sorted(columns)}.")
    if "negative" in names and loss is not None and not loss.takes_negatives:
        raise TaskInputError(f"{describe(loss)} takes no negative column; drop it or choose a "
                             "loss that ranks hard negatives.")
    lengths = {name: len(columns[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise TaskInputError(f"`{where}`'s columns differ in length: {lengths}.")
    rows, skipped = [], 0
    for index, row in enumerate(zip(*(columns[name] for name in names))):
        row = tuple(t.decode("utf-8") if isinstance(t, bytes) else t for t in row)
        for name, text in zip(names, row):
            if not isinstance(text, str):
                raise TaskInputError(f"{where}[{name!r}][{index}] is {type(text).__name__}, "
                                     "not a text.")
        if not row[0].strip() or not row[1].strip():
            skipped += 1
            continue
        if len(row) > 2 and not row[2].strip():
            raise TaskInputError(f"{where}['negative'][{index}] is empty; give every row a "
                                 "negative or drop the column.")
        rows.append(row)
    if not rows:
        raise TaskInputError(f"`{where}` holds no row with both an anchor and a positive.")
    return rows, skipped


def check_batch_size(rows, batch_size, names=COLUMNS):
    """Raises `TaskInputError` if `batch_size` rows cannot hold distinct texts in each column."""
    for position, name in enumerate(names[:len(rows[0])]):
        distinct = len({row[position] for row in rows})
        if batch_size > distinct:
            raise TaskInputError(
                f"batch size {batch_size} is above the {distinct} distinct {name} texts: a "
                "batch never holds a text twice (a repeat is a false negative); use a batch "
                f"size of at most {distinct}.")


def no_duplicate_batches(rows, batch_size, seed, epoch, drop_remainder=False):
    """One epoch's batches (lists of row indices) in which no text occurs twice.

    sentence-transformers' `NoDuplicatesBatchSampler`: rows in a seeded random order (a new
    order each epoch) join the first batch where none of their texts is yet; a row that
    collides waits, in its place, for the next batch. Near the end batches may come short.

    >>> no_duplicate_batches([("a", "b"), ("a", "c"), ("d", "e")], 2, seed=0, epoch=0)
    [[2, 0], [1]]
    """
    remaining = np.random.default_rng([seed, epoch]).permutation(len(rows)).tolist()
    batches = []
    while remaining:
        batch, seen, waiting, end = [], set(), [], len(remaining)
        for position, index in enumerate(remaining):
            if seen.isdisjoint(rows[index]):
                batch.append(index)
                seen.update(rows[index])
                if len(batch) == batch_size:
                    end = position + 1
                    break
            else:
                waiting.append(index)
        remaining = waiting + remaining[end:]
        if len(batch) == batch_size or not drop_remainder:
            batches.append(batch)
    return batches


def pairs_dataset(preprocessor, rows, batch_size, seed=0, shuffle=True):
    """Keras `fit`'s dataset: per epoch, `no_duplicate_batches` as ids dicts `[b, C, S]`."""
    epochs = itertools.count()
    num_columns = len(rows[0])

    def batches():
        epoch = next(epochs) if shuffle else 0
        for batch in no_duplicate_batches(rows, batch_size, seed, epoch):
            yield np.array([rows[i] for i in batch], dtype=object)

    dataset = tf.data.Dataset.from_generator(
        batches, output_signature=tf.TensorSpec([None, num_columns], tf.string))
    return without_autotune(dataset.map(rows_tokenizer(preprocessor)).prefetch(1))


def rows_tokenizer(preprocessor):
    """`texts [b, C] -> ids dict [b, C, S]`: the b·C texts packed as one batch."""
    pack = traced_call(preprocessor)

    def tokenize(texts):
        ids = pack(tf.reshape(texts, [-1]))
        shape = tf.concat([tf.shape(texts), [-1]], axis=0)
        return {name: tf.reshape(t, shape) for name, t in ids.items()}

    return tokenize


class ContrastiveTraining:
    """`SentenceEncoder`'s `compile`/`fit`/`train_step` for the `bert_tf.losses` ranking losses.

    A ranking loss is kept by the model (`contrastive_loss`), not given to Keras: its step
    embeds the texts itself (the cached loss in mini-batches), so Keras's loss machinery,
    which calls the model on `x` and the loss on its output, has no part in it. Other losses
    (a Keras loss on labelled texts) train as `TextTask` trains them.
    """

    contrastive_loss = None

    def compile(self, optimizer="auto", loss="auto", **kwargs):
        """`TextTask.compile`; a `bert_tf.losses` ranking loss trains on text pairs."""
        self.contrastive_loss = loss if is_ranking_loss(loss) else None
        if self.contrastive_loss is not None:
            loss = None
            kwargs.setdefault("metrics", None)
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, shuffle=True, seed=0, **kwargs):
        """Keras `fit`; with a ranking loss, `x` is `{"anchor", "positive"[, "negative"]}`.

        Rows with an empty anchor or positive are skipped (counted in a logged warning);
        `batch_size` (default 32) rows make a batch with no text twice; `seed` orders them.

        Raises:
          TaskInputError: see `pair_rows`; labels `y`; a batch size above the distinct texts.
        """
        if not isinstance(x, dict) or "anchor" not in x:
            return super().fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=shuffle,
                               **kwargs)
        if self.contrastive_loss is None:
            raise TaskInputError("Pairs train with a ranking loss: compile(loss="
                                 "bert_tf.losses.MultipleNegativesRankingLoss()) first.")
        if y is not None:
            raise TaskInputError("Pairs need no labels: each anchor's label is its positive; "
                                 "drop `y`.")
        if self.preprocessor is None:
            raise TaskInputError("Training on texts needs the model's preprocessor.")
        rows, skipped = pair_rows(x, self.contrastive_loss)
        if skipped:
            logging.warning("Skipped %d of %d rows with an empty anchor or positive.", skipped,
                            skipped + len(rows))
        batch_size = batch_size or 32
        check_batch_size(rows, batch_size)
        dataset = pairs_dataset(self.preprocessor, rows, batch_size, seed, shuffle)
        # Under a strategy Keras builds any unbuilt layer by calling the model on the first
        # batch, which is rows [b, C, S], not the model's input; the preprocessor's layers
        # (run in tf.data, never by the model) are the ones left unbuilt: build them here.
        for layer in (self.preprocessor, self.preprocessor.tokenizer):
            if not layer.built:
                layer.build(None)
        with warnings.catch_warnings():
            # An epoch's batch count depends on where texts repeat, so the dataset's size is
            # unknown and Keras warns at the end of every epoch that it ran out of data.
            warnings.filterwarnings("ignore", "Your input ran out of data")
            return super(TextTask, self).fit(dataset, epochs=epochs, shuffle=False, **kwargs)

    def train_step(self, data):
        if self.contrastive_loss is None:
            return super().train_step(data)
        variables = self.trainable_variables
        value, gradients = contrastive_loss_and_gradients(
            self.contrastive_loss, lambda ids: self(ids, training=True), data, variables,
            scale_loss=self.optimizer.scale_loss, replay=random_state(self))
        self.optimizer.apply_gradients(zip(gradients, variables))
        # `value` is this replica's share of the global mean; Keras's loss tracker (a mean
        # over replicas' rows) takes each replica's own mean.
        replicas = tf.distribute.get_replica_context().num_replicas_in_sync
        rows = tf.shape(data["input_word_ids"])[0]
        self._loss_tracker.update_state(value * replicas, sample_weight=rows)
        return self.get_metrics_result()
