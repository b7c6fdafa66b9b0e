"""One pretraining run: options (the flags of `run_pretraining`) -> trained model directory.

`python -m bert_tf.run_pretraining` parses flags into `PretrainingOptions` and calls
`run_pretraining`; tests call it directly.
"""

import dataclasses
import os

import keras
import tensorflow as tf
from absl import logging

from bert_tf.errors import UserError
from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.configs import BertConfig, ConfigError
from bert_tf.data.document_reader import InputError
from bert_tf.data.dynamic_pretraining import dynamic_pretraining_dataset
from bert_tf.data.pretraining_dataset import RecordFormatError, pretraining_dataset
from bert_tf.training.checkpointing import check_output_dir
from bert_tf.training.distribution import get_strategy, is_chief
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining import (build_pretrainer, pretraining_loss_fn,
                                          to_left_to_right, unigram_baseline_accuracy)
from bert_tf.training.train_loop import Trainer, run_training

DTYPES = ("float32", "mixed_bfloat16", "mixed_float16")
INPUT_FORMATS = ("tfrecord", "text")
OPTIONS_FILE = "pretraining_flags.txt"


class PretrainingInputError(UserError, ValueError):
    """A user-facing problem with the run's inputs (files, config, batch sizes)."""


@dataclasses.dataclass
class PretrainingOptions:
    """The run's settings; the names and defaults of `run_pretraining`'s flags."""
    bert_config_file: str = None
    input_file: str = None
    output_dir: str = None
    eval_input_file: str = None
    input_format: str = "tfrecord"
    vocab_file: str = None
    do_lower_case: bool = True
    init_checkpoint: str = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    do_train: bool = True
    do_eval: bool = True
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 1e-4
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    eval_every_steps: int = 0
    max_eval_steps: int = 100
    steps_per_loop: int = 100
    optimizer: str = "adamw"
    weight_decay: float = 0.01
    gradient_accumulation_steps: int = 1
    distribution_strategy: str = "one_device"
    tpu: str = ""
    num_gpus: int = None
    dtype: str = "float32"
    enable_xla: bool = False
    remat: bool = False
    no_nsp: bool = False
    left_to_right: bool = False
    seed: int = 12345


def write_flagfile(options, path):
    """Writes `options` as a flagfile that reruns (and resumes) the same command."""
    lines = [f"--{name}={value}" for name, value in dataclasses.asdict(options).items()
             if value is not None]
    with tf.io.gfile.GFile(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def load_config(options):
    """The model config, checked against the sequence length of the run."""
    if not options.bert_config_file:
        raise PretrainingInputError("--bert_config_file is required.")
    try:
        config = BertConfig.from_json_file(options.bert_config_file)
    except (ConfigError, OSError) as error:
        raise PretrainingInputError(f"--bert_config_file: {error}") from None
    if config.max_position_embeddings < options.max_seq_length:
        raise PretrainingInputError(
            f"{options.bert_config_file}: max_position_embeddings={config.max_position_embeddings} "
            f"is below --max_seq_length={options.max_seq_length}; shorten the sequences or use a "
            "config with more position embeddings.")
    return config


def _check_options(options):
    for name, allowed in (("dtype", DTYPES), ("input_format", INPUT_FORMATS)):
        if getattr(options, name) not in allowed:
            raise PretrainingInputError(f"--{name}={getattr(options, name)!r}; choose one of {list(allowed)}.")
    if not options.output_dir:
        raise PretrainingInputError("--output_dir is required.")
    if options.do_train and not options.input_file:
        raise PretrainingInputError("--input_file is required with --do_train.")
    if not 0 <= options.num_warmup_steps <= options.num_train_steps:
        raise PretrainingInputError(
            f"--num_warmup_steps={options.num_warmup_steps} must lie in "
            f"[0, --num_train_steps={options.num_train_steps}].")
    if options.input_format == "text" and not options.vocab_file:
        raise PretrainingInputError("--input_format=text needs --vocab_file.")


def dataset_fn(options, input_file, batch_size, is_training):
    """`fn(input_context, skip_batches=0)` giving per-replica batches of the run's objective."""
    use_next_sentence = not (options.no_nsp or options.left_to_right)

    def fn(input_context=None, skip_batches=0):
        common = dict(batch_size=batch_size, seq_length=options.max_seq_length,
                      max_predictions_per_seq=options.max_predictions_per_seq,
                      is_training=is_training, input_context=input_context, seed=options.seed,
                      use_next_sentence=use_next_sentence, skip_batches=skip_batches)
        if options.input_format == "text":
            dataset = dynamic_pretraining_dataset(input_file, options.vocab_file,
                                                  options.do_lower_case, **common)
        else:
            dataset = pretraining_dataset(input_file, **common)
        if options.left_to_right:
            dataset = dataset.map(to_left_to_right, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset

    return fn


def _check_inputs(options, fn):
    """Builds the input pipeline once, so bad files fail before any model is built."""
    try:
        fn()
    except (InputError, RecordFormatError, FileNotFoundError) as error:
        raise PretrainingInputError(f"Bad input: {error}") from None


def run_pretraining(options, progress_fn=None):
    """Pretrains (or resumes) and evaluates; writes the model directory into `output_dir`.

    Returns:
      dict with `step`, `train` (last train metrics), `eval` (held-out metrics, with the
      `unigram_baseline` accuracy of the masked tokens) and `model_dir`.

    Raises:
      PretrainingInputError, PermissionError: bad inputs, before any training.
      NonFiniteLossError: the loss became NaN/Inf (the last good checkpoint is kept).
    """
    _check_options(options)
    config = load_config(options)
    check_output_dir(options.output_dir)
    strategy = get_strategy(options.distribution_strategy, options.tpu, options.num_gpus)
    replicas = strategy.num_replicas_in_sync
    if options.train_batch_size % (replicas * options.gradient_accumulation_steps):
        raise PretrainingInputError(
            f"--train_batch_size={options.train_batch_size} is not divisible by {replicas} "
            f"replica(s) x --gradient_accumulation_steps={options.gradient_accumulation_steps}.")
    train_fn = dataset_fn(options, options.input_file, options.train_batch_size, True)
    eval_file = options.eval_input_file or options.input_file
    eval_fn = dataset_fn(options, eval_file, options.eval_batch_size, False) if options.do_eval else None
    if options.do_train:
        _check_inputs(options, train_fn)
    if eval_fn is not None:
        _check_inputs(options, eval_fn)
    if is_chief(strategy):
        write_flagfile(options, os.path.join(options.output_dir, OPTIONS_FILE))

    keras.mixed_precision.set_global_policy(options.dtype)
    keras.utils.set_random_seed(options.seed)  # Same initial weights and dropout on a rerun.
    use_next_sentence = not (options.no_nsp or options.left_to_right)
    with strategy.scope():
        model = build_pretrainer(config, use_next_sentence, options.left_to_right, options.remat)
        optimizer = create_optimizer(options.optimizer, options.learning_rate,
                                     options.num_train_steps, options.num_warmup_steps,
                                     weight_decay=options.weight_decay, dtype=options.dtype)
    loss_fn = pretraining_loss_fn(options.train_batch_size, use_next_sentence)
    trainer = Trainer(strategy, model, loss_fn, optimizer, options.gradient_accumulation_steps,
                      options.enable_xla)
    result = run_training(
        trainer, train_fn, options.train_batch_size,
        options.num_train_steps if options.do_train else 0, options.output_dir,
        model.checkpoint_items(), steps_per_loop=options.steps_per_loop,
        save_checkpoints_steps=options.save_checkpoints_steps,
        init_checkpoint=options.init_checkpoint, eval_dataset_fn=eval_fn,
        eval_every_steps=options.eval_every_steps or None,
        max_eval_steps=options.max_eval_steps, progress_fn=progress_fn)
    eval_metrics = dict(result.eval_metrics)
    if eval_fn is not None:
        eval_metrics["unigram_baseline"] = unigram_baseline_accuracy(
            eval_fn().take(options.max_eval_steps or -1))
        logging.info("Held-out: %s", eval_metrics)
    model_dir = options.output_dir
    if is_chief(strategy):
        write_model_dir(model_dir, config, vocab_file=options.vocab_file,
                        info={"task": "pretraining", "step": result.step,
                              "objective": "ltr" if options.left_to_right else
                              ("mlm" if options.no_nsp else "mlm+nsp")},
                        **model.checkpoint_items())
    keras.mixed_precision.set_global_policy("float32")
    return {"step": result.step, "train": result.train_metrics, "eval": eval_metrics,
            "model_dir": model_dir}
