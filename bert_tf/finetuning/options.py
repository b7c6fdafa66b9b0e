"""`FinetuningOptions`: the settings every fine-tuning run shares, named as google-research's flags.

`bert_tf.cli.define_flags(FinetuningOptions)` makes the flags of `run_classifier`, `run_ner`,
`run_squad` and `run_multiple_choice`; `check_finetuning_options` checks, before any data is
read or any file written, what one field alone cannot: where the model comes from, that its
files exist, that `output_dir` cannot overwrite it, and that the sequence length fits it.
"""

import dataclasses
import os

import tensorflow as tf

from bert_tf.checkpoints.model_dir import CONFIG_NAME, read_config, read_model_info, vocab_path
from bert_tf.configs import BertConfig
from bert_tf.dtype_policy import DTYPES
from bert_tf.errors import UserError
from bert_tf.options import OptionError, check_options, option
from bert_tf.tokenization.bert_preprocessor import PADDINGS
from bert_tf.training.distribution import STRATEGIES
from bert_tf.training.options import PACKED_TRAINING, collective_timeout_option
from bert_tf.training.run_directory import LOCK_FILE

MODEL_SUBDIR = "model"
# Files of a fine-tuning run in its output_dir: a folder with one of them may be resumed.
RUN_FILES = ("flags.txt", "checkpoint", "eval_history.json", "eval_results.json", MODEL_SUBDIR)
MIN_SEQ_LENGTH = 3  # [CLS] one token [SEP]
# Settings that may differ when a run in output_dir is resumed: they do not change what is
# trained (the run's length, --num_train_epochs, may grow too: see run_directory).
RESUMABLE_CHANGES = frozenset({"do_train", "do_eval", "do_predict", "eval_batch_size",
                               "steps_per_loop", "save_checkpoints_steps", "data_dir",
                               "packed_training", "collective_timeout_seconds"})


@dataclasses.dataclass
class FinetuningOptions:
    """The settings of one fine-tuning run (google-research `run_classifier.py` names).

    Give either `model_dir` (bert_config.json + vocab.txt + checkpoint) or `bert_config_file`
    and `vocab_file` (+ `init_checkpoint`, a model directory or checkpoint prefix).

    Example:
    >>> options = FinetuningOptions(output_dir="/tmp/mrpc", model_dir="/tmp/minilm")
    >>> check_finetuning_options(options, do_train=True)          # doctest: +SKIP
    """

    output_dir: str = option(None, "Checkpoints, eval_history.json, predictions, log and the "
                             "fine-tuned model/ folder.", required=True)
    model_dir: str = option(None, "Model directory (bert_config.json, vocab.txt, checkpoint) to "
                            "start from; replaces --bert_config_file/--vocab_file/"
                            "--init_checkpoint.")
    bert_config_file: str = option(None, "bert_config.json of the pretrained model.")
    vocab_file: str = option(None, "WordPiece vocab of the pretrained model.")
    init_checkpoint: str = option(None, "Pretrained model directory or checkpoint prefix "
                                  "(bert_tf format; convert google-research checkpoints with "
                                  "tools/convert_checkpoint.py).")
    do_lower_case: bool = option(True, "Lower-case the text (uncased models).")
    max_seq_length: int = option(128, "Tokens per sequence after WordPiece, [CLS] and [SEP] "
                                 "included (at most the model's max_position_embeddings).",
                                 lower_bound=MIN_SEQ_LENGTH)
    padding: str = option("longest", "Width of each batch: longest (its longest sequence, a "
                          "multiple of 8: least padding, for CPUs and GPUs), buckets (the smallest "
                          "of 16, 32, 64, ... max_seq_length that holds it: a few shapes, each "
                          "compiled once, for XLA on GPUs) or fixed (always max_seq_length: TPUs, "
                          "which take one static shape). Unless fixed, training batches are sorted "
                          "by length within shuffle windows.", choices=PADDINGS)
    packed_training: str = option(
        "auto", "Train on the real tokens only, not the padding (same values and gradients): "
        "true, false, or auto (true unless --distribution_strategy=tpu, whose shapes must be "
        "static).", choices=PACKED_TRAINING)
    train_batch_size: int = option(32, "Global training batch size.", lower_bound=1)
    eval_batch_size: int = option(8, "Batch size for evaluation and prediction.", lower_bound=1)
    learning_rate: float = option(5e-5, "Peak AdamW learning rate (> 0).", lower_bound=0.0)
    num_train_epochs: float = option(3.0, "Epochs of training (> 0, fractions allowed).",
                                     lower_bound=0.0)
    warmup_proportion: float = option(0.1, "Fraction of the steps with linear learning-rate "
                                      "warm-up.", lower_bound=0.0, upper_bound=1.0)
    weight_decay: float = option(0.01, "Decoupled weight decay (not on LayerNorm and biases).",
                                 lower_bound=0.0)
    distribution_strategy: str = option("one_device", "one_device, mirrored, "
                                        "multi_worker_mirrored (TF_CONFIG) or tpu.",
                                        choices=STRATEGIES)
    collective_timeout_seconds: int = collective_timeout_option()
    steps_per_loop: int = option(10, "Steps per compiled loop call (and per log line).",
                                 lower_bound=1)
    save_checkpoints_steps: int = option(1000, "Checkpoint every this many steps (and at every "
                                         "epoch end).", lower_bound=1)
    dtype: str = option("float32", "float32, mixed_bfloat16 (fast on recent CPUs/TPUs) or "
                        "mixed_float16 (GPUs).", choices=DTYPES)
    seed: int = option(0, "Seed of initialisation, dropout and data order.", lower_bound=0)

    def bert_config(self):
        """The pretrained model's `BertConfig`."""
        if self.model_dir:
            return read_config(self.model_dir)
        return BertConfig.from_json_file(self.bert_config_file)

    def vocab(self):
        """The path of the pretrained model's vocab."""
        return vocab_path(self.model_dir) if self.model_dir else self.vocab_file

    @property
    def packs_training(self):
        """Whether training computes real tokens only (`--packed_training`, auto resolved)."""
        if self.packed_training != "auto":
            return self.packed_training == "true"
        return self.distribution_strategy != "tpu"

    def warm_start(self):
        """The model directory or checkpoint prefix the encoder starts from, or None."""
        return self.model_dir or self.init_checkpoint


def check_finetuning_options(options, do_train=True, do_eval=False, do_predict=False):
    """Raises `OptionError` for the first setting that would fail the run or lose files.

    Reads only small files (the model's config and model_info.json), so an entry point calls it
    before reading data.
    """
    check_options(options)
    if not (do_train or do_eval or do_predict):
        raise UserError("Nothing to do: give at least one of --do_train, --do_eval, "
                        "--do_predict.")
    for name in ("learning_rate", "num_train_epochs"):
        if getattr(options, name) <= 0:
            raise OptionError(name, getattr(options, name), "must be greater than 0.")
    if options.distribution_strategy == "tpu" and options.padding != "fixed":
        raise OptionError("padding", options.padding, "TPUs take one static shape: use "
                          "--padding=fixed with --distribution_strategy=tpu.")
    if options.distribution_strategy == "tpu" and options.packed_training == "true":
        raise OptionError("packed_training", "true", "TPUs take one static shape; packing "
                          "changes it with every batch: use --packed_training=false or auto.")
    _check_model_source(options)
    _check_output_dir(options, do_train)
    config = options.bert_config()
    if options.max_seq_length > config.max_position_embeddings:
        raise OptionError("max_seq_length", options.max_seq_length,
                          f"must be at most the model's max_position_embeddings="
                          f"{config.max_position_embeddings}.")
    if not do_train and not _has_finetuned_model(options):
        raise UserError(f"--do_eval and --do_predict without --do_train need a fine-tuned model: "
                        f"give a --model_dir fine-tuned for this task, or the --output_dir of an "
                        f"earlier run (with its {MODEL_SUBDIR}/ folder).")


def _check_model_source(options):
    if options.model_dir:
        if not tf.io.gfile.isdir(options.model_dir):
            raise OptionError("model_dir", options.model_dir, "no such directory.")
        for path in (os.path.join(options.model_dir, CONFIG_NAME), vocab_path(options.model_dir)):
            if not tf.io.gfile.exists(path):
                raise OptionError("model_dir", options.model_dir,
                                  f"has no {os.path.basename(path)}; give a model directory "
                                  "(tools/convert_checkpoint.py writes one).")
        return
    for name in ("bert_config_file", "vocab_file"):
        path = getattr(options, name)
        if not path:
            raise OptionError(name, path or None, "is missing: give --model_dir, or "
                              "--bert_config_file and --vocab_file.")
        if not tf.io.gfile.exists(path) or tf.io.gfile.isdir(path):
            raise OptionError(name, path, "no such file.")
    checkpoint = options.init_checkpoint
    if checkpoint and not (tf.io.gfile.isdir(checkpoint)
                           or tf.io.gfile.exists(checkpoint + ".index")):
        raise OptionError("init_checkpoint", checkpoint,
                          "neither a model directory nor a checkpoint prefix (no .index file).")


def _inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _check_output_dir(options, do_train):
    """The output folder never overwrites the model it starts from, nor an unrelated folder."""
    output_dir = options.output_dir
    for name in ("model_dir", "init_checkpoint"):
        source = getattr(options, name)
        if source and not tf.io.gfile.isdir(source):
            source = os.path.dirname(source) or "."
        if source and _inside(output_dir, source):
            raise OptionError("output_dir", output_dir,
                              f"is (inside) --{name}={getattr(options, name)}, whose files a run "
                              "would overwrite; choose a new folder.")
        if source and do_train and _inside(source, os.path.join(output_dir, MODEL_SUBDIR)):
            raise OptionError("output_dir", output_dir,
                              f"training would overwrite --{name}={getattr(options, name)} with "
                              f"its best epoch ({MODEL_SUBDIR}/); choose a new --output_dir.")
    if not tf.io.gfile.isdir(output_dir):
        if tf.io.gfile.exists(output_dir):
            raise OptionError("output_dir", output_dir, "is a file, not a folder.")
        return
    entries = [name.rstrip("/") for name in tf.io.gfile.listdir(output_dir)
               if name != LOCK_FILE]
    is_run = any(name in RUN_FILES or name.startswith("ckpt-") for name in entries)
    if entries and (CONFIG_NAME in entries or not is_run):
        shown = ", ".join(sorted(entries)[:4]) + (", ..." if len(entries) > 4 else "")
        raise OptionError("output_dir", output_dir,
                          f"holds files of something other than a fine-tuning run ({shown}); "
                          "choose a new or empty folder so that nothing there is overwritten.")


def _has_finetuned_model(options):
    if tf.io.gfile.exists(os.path.join(options.output_dir, MODEL_SUBDIR)):
        return True
    head = options.model_dir and read_model_info(options.model_dir).get("head")
    return head not in (None, "", "encoder", "pretrainer")
