"""Trains sentence embeddings from a pairs file: what `run_sentence_embeddings` runs.

sentence-transformers' recipe (in-batch negatives ranking, no text twice in a batch, AdamW
with linear warm-up and decay) in the package's own training loop (`training.train_loop`): one
step per global batch under any strategy, the embeddings gathered across replicas, checkpoints
that a rerun resumes from after SIGTERM or kill -9. Each step's rows come from a schedule made
before training (`no_duplicate_batches` of every epoch, full batches only, so every replica
always holds its share), so a resumed run takes the same batches as an uninterrupted one.

Example:
>>> options = SentenceEmbeddingOptions(init_checkpoint="minilm/", train_file="pairs.jsonl",
...                                    output_dir="/tmp/run")            # doctest: +SKIP
>>> pairs = read_pairs(options)                                         # doctest: +SKIP
"""

import dataclasses
import math
import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import write_sentence_transformers_folder
from bert_tf.dtype_policy import DTYPES
from bert_tf.errors import UserError, require_extra
from bert_tf.finetuning.table_reader import DataError, read_rows
from bert_tf.keras_tasks.sentence_encoder import SentenceEncoder
from bert_tf.keras_tasks.sentence_training import (
    check_batch_size,
    no_duplicate_batches,
    pair_rows,
    rows_tokenizer,
)
from bert_tf.keras_tasks.text_inputs import TaskInputError
from bert_tf.losses import (
    CachedMultipleNegativesRankingLoss,
    MatryoshkaLoss,
    MultipleNegativesRankingLoss,
)
from bert_tf.losses.contrastive_gradients import contrastive_loss_and_gradients, random_state
from bert_tf.losses.matryoshka import check_dims
from bert_tf.options import OptionError, check_options, option
from bert_tf.training.distribution import STRATEGIES, is_chief
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.options import PACKED_TRAINING, collective_timeout_option
from bert_tf.training.run_directory import LOCK_FILE, OutputDirError, write_settings
from bert_tf.training.train_loop import Trainer, run_training
from bert_tf.training.train_step import ReplicaTrainStep

LOSSES = ("multiple_negatives_ranking", "cached_multiple_negatives_ranking",
          "multiple_negatives_symmetric_ranking", "cached_multiple_negatives_symmetric_ranking")
FLAGS_FILE = "flags.txt"


@dataclasses.dataclass
class SentenceEmbeddingOptions:
    """The settings of one `run_sentence_embeddings` run (google-research flag names where
    they exist, sentence-transformers' loss names)."""

    init_checkpoint: str = option(None, "The model to start from: any folder from_pretrained "
                                  "reads (sentence-transformers, Hugging Face, model "
                                  "directory, ...).", required=True)
    train_file: str = option(None, "Pairs: a .jsonl, .tsv, .csv or .parquet file.",
                             required=True)
    output_dir: str = option(None, "The trained model as a sentence-transformers folder, "
                             "beside the run's checkpoints, flags.txt and log.txt.",
                             required=True)
    anchor_column: str = option("anchor", "Column of the anchors (queries).")
    positive_column: str = option("positive", "Column of each anchor's positive.")
    negative_column: str = option(None, "Column of a hard negative per anchor, if any.")
    loss: str = option("multiple_negatives_ranking", "The ranking loss; cached_* embed "
                       "--mini_batch_size texts at a time (GradCache: the same result in the "
                       "memory of a small batch); *symmetric* also rank positives among "
                       "anchors (pairs only).", choices=LOSSES)
    scale: float = option(20.0, "Inverse temperature of the cosine similarities.",
                          lower_bound=0.0)
    mini_batch_size: int = option(32, "Cached losses: texts per forward pass.", lower_bound=1)
    matryoshka_dims: str = option(None, "Comma-separated embedding prefixes to train, e.g. "
                                  "384,256,128,64 (MatryoshkaLoss, weight 1 each).")
    pooling: str = option(None, "mean, max or cls_token ([CLS]'s state); default the "
                          "folder's, else mean.", choices=("mean", "max", "cls_token"))
    max_seq_length: int = option(None, "Tokens per text; default the folder's, else 128.",
                                 lower_bound=3)
    train_batch_size: int = option(32, "Global batch of pairs (each anchor's negatives are "
                                   "the batch's other positives).", lower_bound=2)
    learning_rate: float = option(5e-5, "Peak AdamW learning rate.", lower_bound=0.0)
    num_train_epochs: float = option(1.0, "Epochs (fractions allowed).", lower_bound=0.0)
    warmup_proportion: float = option(0.1, "Fraction of the steps with linear warm-up.",
                                      lower_bound=0.0, upper_bound=1.0)
    weight_decay: float = option(0.01, "Decoupled weight decay (not on LayerNorm and biases).",
                                 lower_bound=0.0)
    packed_training: str = option("auto", "Train on real tokens only: true, false or auto "
                                  "(true unless on TPUs).", choices=PACKED_TRAINING)
    distribution_strategy: str = option("one_device", "one_device, mirrored, "
                                        "multi_worker_mirrored (TF_CONFIG) or tpu.",
                                        choices=STRATEGIES)
    collective_timeout_seconds: int = collective_timeout_option()
    steps_per_loop: int = option(10, "Steps per compiled loop call (and per log line).",
                                 lower_bound=1)
    save_checkpoints_steps: int = option(500, "Checkpoint every this many steps.",
                                         lower_bound=1)
    dtype: str = option("float32", "float32, mixed_bfloat16 or mixed_float16.", choices=DTYPES)
    seed: int = option(0, "Seed of the batches' order and of dropout.", lower_bound=0)

    def dims(self):
        """`matryoshka_dims` as integers (empty: none)."""
        try:
            dims = tuple(int(d) for d in (self.matryoshka_dims or "").split(",") if d.strip())
        except ValueError:
            raise OptionError("matryoshka_dims", self.matryoshka_dims,
                              "give comma-separated integers, e.g. 384,256,128,64.") from None
        if any(d < 1 for d in dims):
            raise OptionError("matryoshka_dims", self.matryoshka_dims, "dims must be >= 1.")
        return dims

    def build_loss(self, width):
        """The loss the options name, on embeddings `width` wide."""
        kind = CachedMultipleNegativesRankingLoss if self.loss.startswith("cached") else \
            MultipleNegativesRankingLoss
        extra = {"mini_batch_size": self.mini_batch_size} if kind is not \
            MultipleNegativesRankingLoss else {}
        loss = kind(scale=self.scale, symmetric="symmetric" in self.loss, **extra)
        if self.dims():
            try:
                check_dims(self.dims(), width)
            except UserError as error:
                raise OptionError("matryoshka_dims", self.matryoshka_dims, str(error)) from None
            loss = MatryoshkaLoss(loss, dims=self.dims())
        return loss


# Settings that may change when a run resumes: they change neither the batches nor the result.
RESUMABLE_CHANGES = frozenset({"steps_per_loop", "save_checkpoints_steps", "mini_batch_size",
                               "collective_timeout_seconds", "packed_training"})


def check_sentence_options(options, num_replicas=1):
    """Raises `OptionError` for the first setting that cannot run, before anything is read."""
    check_options(options)
    for name in ("learning_rate", "num_train_epochs", "scale"):
        if getattr(options, name) <= 0:
            raise OptionError(name, getattr(options, name), "must be greater than 0.")
    if options.negative_column and "symmetric" in options.loss:
        raise OptionError("negative_column", options.negative_column,
                          f"--loss={options.loss} takes (anchor, positive) pairs only; drop "
                          "--negative_column or use a loss without \"symmetric\".")
    if options.train_batch_size % num_replicas:
        raise OptionError("train_batch_size", options.train_batch_size,
                          f"must split evenly over the {num_replicas} replicas.")
    options.dims()


def read_pairs(options):
    """`(rows of texts, rows skipped)` of `train_file`: each row its anchor, positive (and
    negative); rows with an empty anchor or positive are skipped and counted.

    Raises:
      DataError: the file is unreadable or lacks a column (the ones it has named).
      TaskInputError: no row left, an empty negative, a batch size above the distinct texts.
    """
    names = {"anchor": options.anchor_column, "positive": options.positive_column}
    if options.negative_column:
        names["negative"] = options.negative_column
    path = options.train_file
    if path.lower().endswith(".parquet"):
        parquet = require_extra("pyarrow.parquet", extra="parquet")
        if not os.path.isfile(path):
            raise DataError(f"Data file not found: {path}")
        table = parquet.read_table(path)
        missing = [c for c in names.values() if c not in table.column_names]
        if missing:
            raise DataError(f"{path}: missing column(s) {missing}; the file has "
                            f"{table.column_names}.")
        columns = {key: ["" if v is None else v for v in table.column(c).to_pylist()]
                   for key, c in names.items()}
    else:
        rows = read_rows(path, columns=list(names.values()))
        columns = {key: [row[c] for _, row in rows] for key, c in names.items()}
    rows, skipped = pair_rows(columns, where=path)
    check_batch_size(rows, options.train_batch_size)
    return rows, skipped


def training_schedule(rows, options):
    """Every step's rows: each epoch's `no_duplicate_batches` (full ones), cut to the run's
    length (a fraction of the last epoch)."""
    epochs = math.ceil(options.num_train_epochs)
    per_epoch = [no_duplicate_batches(rows, options.train_batch_size, options.seed, epoch,
                                      drop_remainder=True) for epoch in range(epochs)]
    total = int(sum(len(batches) for batches in per_epoch[:-1])
                + len(per_epoch[-1]) * (options.num_train_epochs - (epochs - 1)))
    if total < 1:
        raise TaskInputError(f"{len(rows)} pairs at batch size {options.train_batch_size} and "
                             f"{options.num_train_epochs} epochs make no step; lower "
                             "--train_batch_size or raise --num_train_epochs.")
    return [batch for batches in per_epoch for batch in batches][:total]


class ContrastiveReplicaStep(ReplicaTrainStep):
    """The loop's replica step for a ranking loss: `contrastive_loss_and_gradients` on the
    replica's rows `[b, C, S]`, then the plain step's all-reduce, clip and update."""

    def _gradients(self, batch):
        value, gradients = contrastive_loss_and_gradients(
            self.loss_fn, lambda ids: self.model(ids, training=True), batch,
            self.model.trainable_variables,
            scale_loss=self.optimizer.scale_loss if self.loss_scaled else None,
            replay=random_state(self.model))
        return value, {}, [None if g is None else tf.convert_to_tensor(g) for g in gradients]


def _dataset_fn(schedule, rows, global_batch, preprocessor):
    """`run_training`'s `(input_context, skip_batches) -> dataset` of per-replica rows: each
    input pipeline yields, per step, its replicas' slices of the step's global batch."""
    tokenize = rows_tokenizer(preprocessor)
    texts = np.array(rows, dtype=object)

    def dataset_fn(context, skip_batches):
        per_replica = context.get_per_replica_batch_size(global_batch)
        replicas = context.num_replicas_in_sync // context.num_input_pipelines
        first = context.input_pipeline_id * replicas
        slices = [texts[batch[r * per_replica:(r + 1) * per_replica]]
                  for batch in schedule for r in range(first, first + replicas)]

        def batches():
            yield from slices[skip_batches:]

        dataset = tf.data.Dataset.from_generator(
            batches, output_signature=tf.TensorSpec([None, texts.shape[1]], tf.string))
        return dataset.map(tokenize).prefetch(1)

    return dataset_fn


def build_model(options, strategy):
    """`(SentenceEncoder, loss)` of the options, under `strategy`'s scope (and the caller's
    dtype policy).

    Raises:
      OptionError: Matryoshka dims above the model's hidden size.
    """
    keras.utils.set_random_seed(options.seed)  # dropout's streams: a rerun takes the same
    with strategy.scope():
        model = SentenceEncoder.from_pretrained(
            options.init_checkpoint, pooling=options.pooling,
            max_seq_length=options.max_seq_length,
            padding="fixed" if options.distribution_strategy == "tpu" else "longest")  # static
        model.encoder.packed_training = (options.packed_training == "true" or (
            options.packed_training == "auto" and options.distribution_strategy != "tpu"))
    return model, options.build_loss(model.output_shape[-1])


def claim_output_dir(options, num_steps):
    """Refuses an `output_dir` holding anything but this run; locks it, writes flags.txt.

    Raises:
      OutputDirError: the folder holds other files, a run with other settings, or a live run.
    """
    output_dir = options.output_dir
    entries = sorted(name.rstrip("/") for name in (tf.io.gfile.listdir(output_dir)
                                                   if tf.io.gfile.isdir(output_dir) else [])
                     if name != LOCK_FILE)
    if entries and FLAGS_FILE not in entries:
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        raise OutputDirError(f"--output_dir={output_dir} holds files of something other than a "
                             f"sentence-embeddings run ({shown}); choose a new or empty folder "
                             "so that nothing there is overwritten.")
    write_settings(output_dir, dataclasses.asdict(options), RESUMABLE_CHANGES,
                   ("num_train_epochs", num_steps), FLAGS_FILE)


def train_sentence_embeddings(options, strategy, model, loss, rows, progress_fn=None):
    """Trains the schedule's steps from the newest checkpoint in `output_dir`; the chief then
    writes the model there as a sentence-transformers folder. Returns `{"step", "loss",
    "model"}`.

    Raises:
      NonFiniteLossError, TrainingStopped, WorkerLostError: as `run_training`.
    """
    schedule = training_schedule(rows, options)
    with strategy.scope():
        optimizer = create_optimizer(
            "adamw", options.learning_rate, len(schedule),
            int(len(schedule) * options.warmup_proportion), weight_decay=options.weight_decay,
            dtype=options.dtype)
    trainer = Trainer(strategy, model, loss, optimizer, step_class=ContrastiveReplicaStep)
    result = run_training(
        trainer, _dataset_fn(schedule, rows, options.train_batch_size, model.preprocessor),
        options.train_batch_size, len(schedule), options.output_dir, model.checkpoint_items(),
        steps_per_loop=options.steps_per_loop,
        save_checkpoints_steps=options.save_checkpoints_steps, progress_fn=progress_fn)
    if is_chief(strategy):  # again on a rerun of a finished run: the same weights
        write_sentence_transformers_folder(model, options.output_dir, exist_ok=True)
    return {"step": result.step, "loss": result.train_metrics.get("loss"),
            "model": options.output_dir}
