"""One pretraining run: options (the flags of `run_pretraining`) -> trained model directory.

`python -m bert_tf.run_pretraining` parses flags into `PretrainingOptions` and calls
`run_pretraining`; tests call it directly.
"""

import dataclasses
import json
import os

import keras
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.model_dir import (
    CONFIG_NAME,
    MODEL_INFO_NAME,
    VOCAB_NAME,
    read_model_info,
    write_model_dir,
)
from bert_tf.configs import BertConfig, ConfigError
from bert_tf.data.document_reader import InputError
from bert_tf.data.pipelines.dynamic_pretraining import dynamic_pretraining_dataset
from bert_tf.data.pipelines.left_to_right import to_left_to_right
from bert_tf.data.pipelines.pretraining_dataset import (
    RecordFormatError,
    input_pipeline,
    pretraining_dataset,
)
from bert_tf.dtype_policy import AUTO, fastest_dtype, policy_scope
from bert_tf.errors import UserError
from bert_tf.models.bert_encoder import POSITION_IDS
from bert_tf.models.bert_pretrainer import build_pretrainer
from bert_tf.tokenization.vocab import load_vocab
from bert_tf.training.checkpointing import (
    check_output_dir,
    disk_full_is_a_user_error,
    variables_bytes,
)
from bert_tf.training.distribution import (
    check_batch_split,
    get_strategy,
    is_chief,
    lost_worker_is_a_user_error,
)
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.options import (
    RESUMABLE_CHANGES,
    PretrainingOptions,
    check_pretraining_options,
)
from bert_tf.training.pretraining_loss import (
    majority_label_share,
    pretraining_loss_fn,
    unigram_baseline_accuracy,
)
from bert_tf.training.run_directory import claim_output_dir, release_output_dir
from bert_tf.training.train_loop import Trainer, run_training


class PretrainingInputError(UserError, ValueError):
    """A user-facing problem with the run's inputs (files, config, batch sizes)."""


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


def dataset_fn(options, config, input_file, batch_size, is_training):
    """`fn(input_context, skip_batches=0)` giving per-replica batches of the run's objective.

    A pipeline is built once per (input pipeline, skip) and handed out again after that:
    checking the inputs builds the pipelines that training and evaluation then read, and
    building the text pipeline traces its functions (~2 s each time on 2 cores).
    """
    built = {}

    def fn(input_context=None, skip_batches=0):
        key = (input_pipeline(input_context, batch_size), skip_batches)
        if key not in built:
            built[key] = _build(input_context, skip_batches)
        return built[key]

    def _build(input_context, skip_batches):
        common = dict(batch_size=batch_size, seq_length=options.max_seq_length,
                      max_predictions_per_seq=options.max_predictions_per_seq,
                      is_training=is_training, input_context=input_context, seed=options.seed,
                      use_next_sentence=options.use_next_sentence, skip_batches=skip_batches)
        if options.input_format == "text":
            dataset = dynamic_pretraining_dataset(input_file, options.vocab_file,
                                                  options.do_lower_case, **common)
        else:
            dataset = pretraining_dataset(input_file, vocab_size=config.vocab_size, **common)
        if options.left_to_right:
            dataset = dataset.map(to_left_to_right, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset

    return fn


def _check_inputs(fn):
    """Builds an input pipeline once, so bad files fail before any model is built."""
    try:
        return fn()
    except (InputError, RecordFormatError, FileNotFoundError) as error:
        raise PretrainingInputError(f"Bad input: {error}") from None


def _packed_rows(options, train_dataset, eval_dataset):
    """Whether the records hold rows of several sequences (`--max_sequences_per_pack`), checked
    against the options that cannot take them."""
    packed = {flag: POSITION_IDS in dataset.element_spec
              for flag, dataset in (("input_file", train_dataset),
                                    ("eval_input_file", eval_dataset)) if dataset is not None}
    if len(set(packed.values())) > 1:
        kind = lambda flag: (  # noqa: E731
            "rows of several sequences" if packed[flag] else "one sequence per record")
        raise PretrainingInputError(f"--eval_input_file holds {kind('eval_input_file')} but "
                                    f"--input_file {kind('input_file')}: make both with the same "
                                    "--max_sequences_per_pack (1 or more).")
    if not any(packed.values()):
        return False
    if options.packed_training == "true":
        raise PretrainingInputError(
            "--packed_training=true computes real tokens only, which rows of several sequences "
            "(records made with --max_sequences_per_pack) do not take: use --packed_training=false "
            "(or auto); packed records have little padding to skip.")
    if options.left_to_right:
        raise PretrainingInputError(
            "--left_to_right predicts each next token of a row, across the sequences of packed "
            "records (made with --max_sequences_per_pack): use records made without it.")
    return True


def _check_vocab(options, config):
    if not options.vocab_file:
        return
    if not tf.io.gfile.exists(options.vocab_file):
        raise PretrainingInputError(f"--vocab_file={options.vocab_file}: no such file.")
    with tf.io.gfile.GFile(options.vocab_file) as f:
        size = len(f.read().rstrip("\n").split("\n"))
    if size > config.vocab_size:
        raise PretrainingInputError(
            f"--vocab_file={options.vocab_file} has {size} tokens but vocab_size="
            f"{config.vocab_size} in {options.bert_config_file}; ids past {config.vocab_size - 1} "
            "would have no embedding. Use the config of this vocab.")


# Config keys a warm start may change: they neither shape nor compute the restored weights.
_WARM_START_FREE_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range")


def _check_init_checkpoint(options, config):
    """A model directory as --init_checkpoint (phase 1's output_dir) must hold the model this run
    builds: the same bert_config (dropout aside), vocab and, for text input, casing.

    Another size fails later too, at the restore; a same-shaped difference (hidden_act, another
    vocab of the same size, the other casing) would train on silently.
    """
    path = options.init_checkpoint
    if not path:
        return
    folder = path if tf.io.gfile.isdir(path) else os.path.dirname(path)
    where = f"--init_checkpoint={path} does not match the model of this run"
    saved_config = os.path.join(folder, CONFIG_NAME)
    if tf.io.gfile.exists(saved_config):
        try:
            with tf.io.gfile.GFile(saved_config) as f:
                saved = BertConfig.from_dict(json.load(f), saved_config)
        except (ConfigError, ValueError) as error:
            raise PretrainingInputError(f"--init_checkpoint: {error}") from None
        differ = [f"{key}={getattr(saved, key)!r} there, {getattr(config, key)!r} here"
                  for key in (field.name for field in dataclasses.fields(BertConfig))
                  if key not in _WARM_START_FREE_KEYS and getattr(saved, key) != getattr(config,
                                                                                         key)]
        if differ:
            raise PretrainingInputError(f"{where}: its {CONFIG_NAME} differs from "
                                        f"--bert_config_file={options.bert_config_file} "
                                        f"({'; '.join(differ)}); continue that model with "
                                        f"--bert_config_file={saved_config}.")
    saved_vocab = os.path.join(folder, VOCAB_NAME)
    if options.vocab_file and tf.io.gfile.exists(saved_vocab):
        theirs, ours = load_vocab(saved_vocab), load_vocab(options.vocab_file)
        if theirs != ours:
            line = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b),
                        min(len(theirs), len(ours)))
            raise PretrainingInputError(
                f"{where}: --vocab_file={options.vocab_file} is not its {VOCAB_NAME} ({len(ours)} "
                f"tokens vs {len(theirs)}, first difference at line {line + 1}); its embeddings "
                f"belong to that vocab: pass --vocab_file={saved_vocab}.")
    saved_case = read_model_info(folder).get("do_lower_case") if tf.io.gfile.isdir(folder) else None
    other_case = saved_case is not None and saved_case != options.do_lower_case
    if options.input_format == "text" and other_case:
        raise PretrainingInputError(
            f"{where}: it was trained {'uncased' if saved_case else 'cased'} "
            f"({os.path.join(folder, MODEL_INFO_NAME)}); pass --do_lower_case={saved_case}.")


@dataclasses.dataclass
class PreparedRun:
    """A pretraining run whose options and inputs passed every check, its folder claimed."""
    options: PretrainingOptions
    config: BertConfig
    strategy: tf.distribute.Strategy
    train_fn: object
    eval_fn: object
    eval_dataset: tf.data.Dataset
    packed_rows: bool = False  # records of --max_sequences_per_pack (rows of several sequences)


def prepare_pretraining(options):
    """Checks every option and input, then claims `output_dir`; nothing is trained yet.

    Raises:
      UserError (OptionError, PretrainingInputError, OutputDirError), PermissionError: a bad
      option, input or output folder, found before anything is written.
    """
    check_pretraining_options(options)
    config = load_config(options)
    _check_vocab(options, config)
    _check_init_checkpoint(options, config)
    check_output_dir(options.output_dir)
    strategy = get_strategy(options.distribution_strategy, options.tpu, options.num_gpus,
                            options.collective_timeout_seconds)
    try:
        check_batch_split(options.train_batch_size, strategy.num_replicas_in_sync,
                          options.gradient_accumulation_steps)
    except ValueError as error:
        raise PretrainingInputError(f"--train_batch_size: {error}") from None
    # The pipelines' shuffles take their seeds with TensorFlow's global seed: set before they
    # are built (they are built once, here), the run's order follows --seed alone.
    keras.utils.set_random_seed(options.seed)
    train_fn = dataset_fn(options, config, options.input_file, options.train_batch_size, True)
    eval_file = options.eval_input_file or options.input_file
    eval_fn = (dataset_fn(options, config, eval_file, options.eval_batch_size, False)
               if options.do_eval else None)
    train_dataset = _check_inputs(train_fn) if options.do_train else None
    eval_dataset = _check_inputs(eval_fn) if eval_fn is not None else None
    packed_rows = _packed_rows(options, train_dataset, eval_dataset)
    if is_chief(strategy):
        claim_output_dir(options.output_dir, dataclasses.asdict(options), RESUMABLE_CHANGES,
                         length=("num_train_steps", options.num_train_steps))
    if options.dtype == AUTO:  # after the claim: the folder keeps `auto`, which any CPU resumes
        dtype, why = fastest_dtype()
        logging.info("--dtype=auto: %s (%s).", dtype, why)
        options = dataclasses.replace(options, dtype=dtype)
    return PreparedRun(options, config, strategy, train_fn, eval_fn, eval_dataset, packed_rows)


def run_pretraining(options, progress_fn=None):
    """Pretrains (or resumes) and evaluates; writes the model directory into `output_dir`.

    `prepare_pretraining` then `pretrain`; an entry point calls the two itself to start its
    log file in `output_dir` only once the folder is claimed.

    Returns:
      dict with `step`, `train` (last train metrics), `eval` (held-out metrics, with the
      `unigram_baseline` accuracy of the masked tokens) and `model_dir`.

    Raises:
      UserError, PermissionError: bad options or inputs, before any training.
      NonFiniteLossError: the loss became NaN/Inf (the last good checkpoint is kept).
      WorkerLostError: a worker of a multi-worker run died or hangs (rerun them all).
    """
    return pretrain(prepare_pretraining(options), progress_fn)


def pretrain(run, progress_fn=None):
    """Trains and evaluates a `PreparedRun` under its dtype policy; see `run_pretraining`."""
    try:
        with policy_scope(run.options.dtype), lost_worker_is_a_user_error(
                run.strategy, run.options.collective_timeout_seconds):
            return _train_and_write(run, progress_fn)
    finally:
        release_output_dir(run.options.output_dir)


def _train_and_write(run, progress_fn):
    options, config, strategy = run.options, run.config, run.strategy
    keras.utils.set_random_seed(options.seed)  # Same initial weights and dropout on a rerun.
    # Rows of several sequences are nearly full already: computed padded, static shapes.
    packs_training = options.packs_training and not run.packed_rows
    if options.do_train:
        logging.info("Training computes %s (--packed_training=%s, --max_seq_length=%d%s).",
                     "real tokens only" if packs_training else "every slot, padding included",
                     options.packed_training, options.max_seq_length,
                     ", records of several sequences per row" if run.packed_rows else "")
    with strategy.scope():
        model = build_pretrainer(config, options.use_next_sentence, options.left_to_right,
                                 options.remat, packed_training=packs_training,
                                 packed_rows=run.packed_rows)
        optimizer = create_optimizer(options.optimizer, options.learning_rate,
                                     options.num_train_steps, options.num_warmup_steps,
                                     weight_decay=options.weight_decay, dtype=options.dtype)
    loss_fn = pretraining_loss_fn(options.train_batch_size, options.use_next_sentence)
    trainer = Trainer(strategy, model, loss_fn, optimizer, options.gradient_accumulation_steps,
                      options.enable_xla)
    result = run_training(
        trainer, run.train_fn, options.train_batch_size,
        options.num_train_steps if options.do_train else 0, options.output_dir,
        model.checkpoint_items(), steps_per_loop=options.steps_per_loop,
        save_checkpoints_steps=options.save_checkpoints_steps,
        init_checkpoint=options.init_checkpoint, eval_dataset_fn=run.eval_fn,
        eval_every_steps=options.eval_every_steps or None,
        max_eval_steps=options.max_eval_steps, progress_fn=progress_fn)
    eval_metrics = dict(result.eval_metrics)
    if run.eval_fn is not None:
        held_out = list(run.eval_dataset.take(options.max_eval_steps))  # one pass, two baselines
        eval_metrics["unigram_baseline"] = unigram_baseline_accuracy(held_out)
        if options.use_next_sentence:
            eval_metrics["nsp_majority_baseline"] = majority_label_share(held_out)
    model_dir = options.output_dir
    items = model.checkpoint_items()
    if is_chief(strategy):
        with disk_full_is_a_user_error(model_dir, lambda: variables_bytes(items.values())):
            write_model_dir(model_dir, config, vocab_file=options.vocab_file,
                            info={"head": "pretrainer", "do_lower_case": options.do_lower_case,
                                  "max_seq_length": options.max_seq_length,
                                  "step": result.step, "objective": options.objective},
                            **items)
    return {"step": result.step, "train": result.train_metrics, "eval": eval_metrics,
            "model_dir": model_dir}
