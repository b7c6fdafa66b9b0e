"""`PretrainingOptions`: every setting of a pretraining run, named as `run_pretraining`'s flags.

The names and meanings are google-research `run_pretraining.py`'s where it has them.
`bert_tf.cli.define_flags(PretrainingOptions)` makes the flags; `check_pretraining_options`
checks what one field alone cannot (warm-up within the run, P within S, ...).
"""

import dataclasses

from bert_tf.dtype_policy import AUTO, DTYPES
from bert_tf.options import OptionError, check_options, option
from bert_tf.training.distribution import DEFAULT_COLLECTIVE_TIMEOUT_SECONDS, STRATEGIES
from bert_tf.training.optimization import OPTIMIZERS

INPUT_FORMATS = ("tfrecord", "text")
PACKED_TRAINING = ("auto", "true", "false")
# --packed_training=auto packs from this sequence length up (docs/design.md, "Packed training").
PACKED_FROM_SEQ_LENGTH = 256

# Options that may change between a run and its resume: they do not change what is trained.
RESUMABLE_CHANGES = frozenset({
    "do_train", "do_eval", "eval_input_file", "eval_batch_size", "eval_every_steps",
    "max_eval_steps", "steps_per_loop", "save_checkpoints_steps", "num_gpus", "tpu",
    "packed_training", "collective_timeout_seconds"})


def collective_timeout_option():
    """The `collective_timeout_seconds` field, the same in pretraining and fine-tuning."""
    return option(
        DEFAULT_COLLECTIVE_TIMEOUT_SECONDS, "multi_worker_mirrored: the longest a worker waits "
        "for the others in one step before it stops, naming the worker it lost (a dead one is "
        "found sooner, by heartbeats).", lower_bound=1)


@dataclasses.dataclass
class PretrainingOptions:
    """The settings of one pretraining run (defaults: google-research's, BERT-base scale).

    Example:
    >>> options = PretrainingOptions(bert_config_file="official_configs/bert_config_tiny.json",
    ...                              input_file="train.tfrecord", output_dir="/tmp/run")
    >>> check_pretraining_options(options)
    """
    bert_config_file: str = option(None, "bert_config.json of the model to pretrain.",
                                   required=True)
    input_file: str = option(None, "Comma-separated globs: pretraining TFRecords, or text with "
                             "--input_format=text.")
    output_dir: str = option(None, "Checkpoints, summaries, log, flags and the final model "
                             "directory.", required=True)
    eval_input_file: str = option(None, "Held-out data for --do_eval (default: --input_file).")
    input_format: str = option("tfrecord", "tfrecord (create_pretraining_data output) or text "
                               "(dynamic masking).", choices=INPUT_FORMATS)
    vocab_file: str = option(None, "WordPiece vocab (needed for text input; copied into the "
                             "model directory).")
    do_lower_case: bool = option(True, "Lower-case text input (uncased vocab).")
    init_checkpoint: str = option(None, "Model directory or checkpoint to start from (e.g. "
                                  "phase 1's output).")
    max_seq_length: int = option(128, "Sequence length S.", lower_bound=8)
    max_predictions_per_seq: int = option(20, "Masked-LM predictions per sequence P.",
                                          lower_bound=1)
    do_train: bool = option(True, "Train.")
    do_eval: bool = option(True, "Evaluate on held-out data at the end.")
    train_batch_size: int = option(32, "Global batch size per update (all replicas, all "
                                   "accumulation steps).", lower_bound=1)
    eval_batch_size: int = option(8, "Global eval batch size.", lower_bound=1)
    learning_rate: float = option(1e-4, "Peak learning rate.", lower_bound=0.0)
    num_train_steps: int = option(100000, "Number of updates.", lower_bound=1)
    num_warmup_steps: int = option(10000, "Linear warm-up steps.", lower_bound=0)
    save_checkpoints_steps: int = option(1000, "Checkpoint every this many steps.",
                                         lower_bound=1)
    eval_every_steps: int = option(0, "Also evaluate every this many steps (0: only at the "
                                   "end).", lower_bound=0)
    max_eval_steps: int = option(100, "Eval batches.", lower_bound=1)
    steps_per_loop: int = option(100, "Steps per compiled loop call (and per progress line).",
                                 lower_bound=1)
    optimizer: str = option("adamw", "adamw (paper), lamb (large batches; tensorflow/models' "
                            "LAMB) or keras_lamb (keras.optimizers.Lamb).", choices=OPTIMIZERS)
    weight_decay: float = option(0.01, "Weight decay, not on LayerNorm and bias (decoupled; "
                                 "lamb: inside the trust ratio).",
                                 lower_bound=0.0)
    gradient_accumulation_steps: int = option(1, "Micro-batches per update.", lower_bound=1)
    distribution_strategy: str = option("one_device", "one_device, mirrored, "
                                        "multi_worker_mirrored (TF_CONFIG) or tpu.",
                                        choices=STRATEGIES)
    tpu: str = option("", "TPU name or grpc:// address for --distribution_strategy=tpu.")
    num_gpus: int = option(None, "Devices for mirrored (default: all).", lower_bound=1)
    collective_timeout_seconds: int = collective_timeout_option()
    dtype: str = option("float32", "float32, mixed_bfloat16, mixed_float16 (with loss "
                        "scaling) or auto (mixed_bfloat16 where this machine's bfloat16 matmuls "
                        "are clearly faster, measured at the start; float32 elsewhere).",
                        choices=DTYPES + (AUTO,))
    enable_xla: bool = option(False, "XLA-compile the train step (single device on CPU).")
    remat: bool = option(False, "Recompute each block in the backward pass (less memory at "
                         "seq 512).")
    packed_training: str = option(
        "auto", "Compute real tokens only, not padding (same values and gradients): true, "
        f"false, or auto (true from --max_seq_length={PACKED_FROM_SEQ_LENGTH} up, where "
        "records are far from full; false under --enable_xla or on TPU, whose shapes must be "
        "static).", choices=PACKED_TRAINING)
    no_nsp: bool = option(False, "Masked LM only (paper Table 5 'No NSP').")
    left_to_right: bool = option(False, "Causal next-token LM, no NSP (paper Table 5 'LTR & "
                                 "No NSP').")
    seed: int = option(12345, "Data order, initialisation and masking seed.")

    @property
    def use_next_sentence(self):
        """Whether the run trains the next-sentence head (not for MLM-only or LTR runs)."""
        return not (self.no_nsp or self.left_to_right)

    @property
    def packs_training(self):
        """Whether training computes real tokens only (`--packed_training`, auto resolved)."""
        if self.packed_training != "auto":
            return self.packed_training == "true"
        return (self.max_seq_length >= PACKED_FROM_SEQ_LENGTH and not self.enable_xla
                and self.distribution_strategy != "tpu")

    @property
    def objective(self):
        """The pretraining objective, as recorded in the model directory."""
        return "ltr" if self.left_to_right else ("mlm" if self.no_nsp else "mlm+nsp")


def check_pretraining_options(options):
    """Raises `OptionError` for a bad field or a bad combination, before any work starts."""
    check_options(options)
    if options.learning_rate <= 0:
        raise OptionError("learning_rate", options.learning_rate, "must be positive.")
    if options.num_warmup_steps > options.num_train_steps:
        raise OptionError("num_warmup_steps", options.num_warmup_steps,
                          f"must not exceed --num_train_steps={options.num_train_steps}.")
    if options.max_predictions_per_seq > options.max_seq_length:
        raise OptionError("max_predictions_per_seq", options.max_predictions_per_seq,
                          f"must not exceed --max_seq_length={options.max_seq_length}.")
    if options.train_batch_size % options.gradient_accumulation_steps:
        raise OptionError("train_batch_size", options.train_batch_size,
                          "must be divisible by --gradient_accumulation_steps="
                          f"{options.gradient_accumulation_steps}.")
    if options.do_train and not options.input_file:
        raise OptionError("input_file", None, "is required with --do_train.")
    if options.do_eval and not (options.eval_input_file or options.input_file):
        raise OptionError("eval_input_file", None, "is required with --do_eval.")
    static = ("enable_xla" if options.enable_xla else
              "distribution_strategy" if options.distribution_strategy == "tpu" else None)
    if options.packed_training == "true" and static:
        raise OptionError("packed_training", "true",
                          f"needs dynamic shapes, which --{static}={getattr(options, static)} "
                          "rules out; use --packed_training=false (or auto).")
    if options.input_format == "text" and not options.vocab_file:
        raise OptionError("vocab_file", None, "is required with --input_format=text.")
