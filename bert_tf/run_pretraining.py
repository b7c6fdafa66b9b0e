"""Pretrains BERT with masked LM + next-sentence prediction (paper §3.1).

    python -m bert_tf.run_pretraining --flagfile=official_configs/demo.flags

Flags follow google-research/bert's run_pretraining.py. Rerunning the same command resumes
from the newest checkpoint in --output_dir; the end writes a model directory there.
"""

import dataclasses
import sys

from absl import app, flags, logging

from bert_tf.training.pretraining_runner import (DTYPES, INPUT_FORMATS, PretrainingInputError,
                                                 PretrainingOptions, run_pretraining)
from bert_tf.training.distribution import STRATEGIES
from bert_tf.training.optimization import OPTIMIZERS
from bert_tf.training.train_loop import NonFiniteLossError

_HELP = {
    "bert_config_file": "bert_config.json of the model to pretrain.",
    "input_file": "Comma-separated globs: pretraining TFRecords, or text with --input_format=text.",
    "output_dir": "Checkpoints, summaries, flags and the final model directory.",
    "eval_input_file": "Held-out data for --do_eval (default: --input_file).",
    "input_format": "tfrecord (create_pretraining_data output) or text (dynamic masking).",
    "vocab_file": "WordPiece vocab (needed for text input; copied into the model directory).",
    "do_lower_case": "Lower-case text input (uncased vocab).",
    "init_checkpoint": "Model directory or checkpoint to start from (e.g. phase 1's output).",
    "max_seq_length": "Sequence length S.",
    "max_predictions_per_seq": "Masked-LM predictions per sequence P.",
    "do_train": "Train.",
    "do_eval": "Evaluate on held-out data at the end.",
    "train_batch_size": "Global batch size per update (all replicas, all accumulation steps).",
    "eval_batch_size": "Global eval batch size.",
    "learning_rate": "Peak learning rate.",
    "num_train_steps": "Number of updates.",
    "num_warmup_steps": "Linear warm-up steps.",
    "save_checkpoints_steps": "Checkpoint every this many steps.",
    "eval_every_steps": "Also evaluate every this many steps (0: only at the end).",
    "max_eval_steps": "Eval batches.",
    "steps_per_loop": "Steps per compiled loop call (and per log line).",
    "optimizer": "adamw (paper) or lamb (large batches).",
    "weight_decay": "Decoupled weight decay (not on LayerNorm and bias).",
    "gradient_accumulation_steps": "Micro-batches per update.",
    "distribution_strategy": "one_device, mirrored, multi_worker_mirrored (TF_CONFIG) or tpu.",
    "tpu": "TPU name or grpc:// address for --distribution_strategy=tpu.",
    "num_gpus": "Devices for mirrored (default: all).",
    "dtype": "float32, mixed_bfloat16 or mixed_float16 (with loss scaling).",
    "enable_xla": "XLA-compile the train step (single device on CPU).",
    "remat": "Recompute each block in the backward pass (less memory at seq 512).",
    "no_nsp": "Masked LM only (paper Table 5 'No NSP').",
    "left_to_right": "Causal next-token LM, no NSP (paper Table 5 'LTR & No NSP').",
    "seed": "Data order and masking seed.",
}
_ENUMS = {"input_format": INPUT_FORMATS, "optimizer": OPTIMIZERS, "dtype": DTYPES,
          "distribution_strategy": STRATEGIES}


def define_flags(flag_values=flags.FLAGS):
    """Defines one flag per `PretrainingOptions` field (tests pass a fresh `FlagValues`)."""
    for field in dataclasses.fields(PretrainingOptions):
        name, default, help_text = field.name, field.default, _HELP[field.name]
        if name in _ENUMS:
            flags.DEFINE_enum(name, default, _ENUMS[name], help_text, flag_values=flag_values)
        elif field.type is bool:
            flags.DEFINE_bool(name, default, help_text, flag_values=flag_values)
        elif field.type is int:
            flags.DEFINE_integer(name, default, help_text, flag_values=flag_values)
        elif field.type is float:
            flags.DEFINE_float(name, default, help_text, flag_values=flag_values)
        else:
            flags.DEFINE_string(name, default, help_text, flag_values=flag_values)


def options_from_flags(flag_values=flags.FLAGS):
    return PretrainingOptions(**{f.name: flag_values[f.name].value
                                 for f in dataclasses.fields(PretrainingOptions)})


define_flags()
FLAGS = flags.FLAGS


def _log_progress(progress):
    metrics = " ".join(f"{k}={v:.4f}" for k, v in progress.metrics.items() if k != "loss")
    logging.info("step %d/%d loss=%.4f %s lr=%.3g %.1f seq/s ETA %.0fs", progress.step,
                 progress.num_steps, progress.loss, metrics, progress.learning_rate,
                 progress.sequences_per_second, progress.eta_seconds)


def main(argv):
    del argv
    options = options_from_flags()
    try:
        result = run_pretraining(options, progress_fn=_log_progress)
    except (PretrainingInputError, PermissionError, NonFiniteLossError) as error:
        logging.error("%s", error)
        sys.exit(f"run_pretraining: {error}")
    if result["eval"]:
        print("Held-out evaluation at step %d:" % result["step"])
        for key, value in sorted(result["eval"].items()):
            print(f"  {key} = {value:.4f}")
    print(f"Model directory: {result['model_dir']}")


if __name__ == "__main__":
    logging.set_verbosity(logging.INFO)
    app.run(main)
