"""Flags and `main` shared by the fine-tuning entry points (google-research flag names).

Only `bert_tf/run_*.py` call `define_finetune_flags`; library code never reads FLAGS.
"""

import dataclasses
import os
import sys

import tensorflow as tf
from absl import flags, logging

from bert_tf.tasks.finetuning import FinetuneConfig, run_finetuning
from bert_tf.tasks.table_reader import DataError
from bert_tf.training.distribution import STRATEGIES
from bert_tf.training.train_loop import NonFiniteLossError

DTYPES = ("float32", "mixed_bfloat16", "mixed_float16")
_HELP = {
    "output_dir": "Checkpoints, eval_history.json, predictions and the fine-tuned model/ folder.",
    "model_dir": "Model directory (bert_config.json, vocab.txt, checkpoint) to start from; "
                 "replaces --bert_config_file/--vocab_file/--init_checkpoint.",
    "bert_config_file": "bert_config.json of the pretrained model.",
    "vocab_file": "WordPiece vocab of the pretrained model.",
    "init_checkpoint": "Pretrained model directory or checkpoint prefix (bert_tf format; "
                       "convert google-research checkpoints with tools/convert_checkpoint.py).",
    "do_lower_case": "Lower-case the text (uncased models).",
    "max_seq_length": "Tokens per sequence after WordPiece, [CLS] and [SEP] included.",
    "train_batch_size": "Global training batch size.",
    "eval_batch_size": "Batch size for evaluation and prediction.",
    "learning_rate": "Peak AdamW learning rate.",
    "num_train_epochs": "Epochs of training (fractions allowed).",
    "warmup_proportion": "Fraction of the steps with linear learning-rate warm-up.",
    "weight_decay": "Decoupled weight decay (not on LayerNorm and biases).",
    "distribution_strategy": "one_device, mirrored, multi_worker_mirrored (TF_CONFIG) or tpu.",
    "steps_per_loop": "Steps per compiled loop call (and per log line).",
    "save_checkpoints_steps": "Checkpoint every this many steps (and at every epoch end).",
    "dtype": "float32, mixed_bfloat16 (fast on recent CPUs/TPUs) or mixed_float16 (GPUs).",
    "seed": "Seed of initialisation, dropout and data order.",
}


def define_finetune_flags():
    """Defines the `FinetuneConfig` fields plus do_train / do_eval / do_predict / data_dir."""
    for field in dataclasses.fields(FinetuneConfig):
        name, help_text = field.name, _HELP[field.name]
        default = None if field.default is dataclasses.MISSING else field.default
        if name == "distribution_strategy":
            flags.DEFINE_enum(name, default, STRATEGIES, help_text)
        elif name == "dtype":
            flags.DEFINE_enum(name, default, DTYPES, help_text)
        elif field.type is bool:
            flags.DEFINE_bool(name, default, help_text)
        elif field.type is int:
            flags.DEFINE_integer(name, default, help_text)
        elif field.type is float:
            flags.DEFINE_float(name, default, help_text)
        else:
            flags.DEFINE_string(name, default, help_text)
    flags.DEFINE_string("data_dir", None, "Folder with the task's files.")
    flags.DEFINE_bool("do_train", False, "Fine-tune on the training set.")
    flags.DEFINE_bool("do_eval", False, "Evaluate on the dev set after every epoch and at the end.")
    flags.DEFINE_bool("do_predict", False, "Write predictions for the test set.")
    flags.mark_flag_as_required("output_dir")


def finetune_config_from_flags(values):
    """A `FinetuneConfig` from parsed flags; writes the resolved flags to output_dir/flags.txt."""
    config = FinetuneConfig(**{f.name: values[f.name].value
                               for f in dataclasses.fields(FinetuneConfig)})
    tf.io.gfile.makedirs(config.output_dir)
    with tf.io.gfile.GFile(os.path.join(config.output_dir, "flags.txt"), "w") as f:
        f.write(values.flags_into_string())
    return config


def run_main(program, build_adapter):
    """An entry point's `main`: flags → `build_adapter(config)` → `run_finetuning` → report.

    User mistakes (bad data, bad flags, unwritable output, a NaN loss) exit with one clear
    line instead of a stack trace.
    """
    values = flags.FLAGS
    config = finetune_config_from_flags(values)
    try:
        adapter = build_adapter(config)
        result = run_finetuning(adapter, config, values.do_train, values.do_eval,
                                values.do_predict)
    except (DataError, ValueError, FileNotFoundError, PermissionError,
            NonFiniteLossError) as error:
        logging.error("%s", error)
        sys.exit(f"{program}: {error}")
    for entry in result["history"]:
        metrics = {k: round(v, 4) for k, v in entry.get("metrics", {}).items()}
        print(f"epoch {entry['epoch']} step {entry['step']} {entry['train_seconds']:.0f}s "
              f"{metrics}{' (best)' if entry.get('best') else ''}")
    if result["eval"]:
        print("eval:", {k: round(v, 4) for k, v in result["eval"].items()})
    for path in result.get("predictions", []):
        print("wrote", path)
    return result
