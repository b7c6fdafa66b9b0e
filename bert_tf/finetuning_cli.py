"""What the fine-tuning entry points (`run_classifier`, `run_ner`, `run_squad`,
`run_multiple_choice`) share: their common flags, their `main`, and what they print.

Each entry point defines its task's own flags, then calls `run(build_adapter, check)`: the
options are checked (bounds, model files, output folder, the task's files) before any data is
read or anything is written; then the task's data is read, the resolved flags go to
`output_dir/flags.txt`, the full log to `output_dir/log.txt`; the console shows the log's
messages (one line per training loop call) and the results.

Example (an entry point):
>>> from bert_tf import finetuning_cli
>>> finetuning_cli.define_flags(defaults={"max_seq_length": 384})    # doctest: +SKIP
>>> finetuning_cli.run(build_adapter, check=check_task_flags)         # doctest: +SKIP
"""

import dataclasses
import sys

import tensorflow as tf  # noqa: E402
from absl import flags, logging  # noqa: E402

from bert_tf import cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.finetuning.driver import check_run, num_train_steps, run_finetuning, training_strategy  # noqa: E402
from bert_tf.finetuning.options import (  # noqa: E402
    RESUMABLE_CHANGES,
    FinetuningOptions,
    check_finetuning_options,
)
from bert_tf.options import OptionError  # noqa: E402
from bert_tf.training.distribution import is_chief  # noqa: E402
from bert_tf.training.run_directory import release_output_dir, write_settings  # noqa: E402

FLAGS = flags.FLAGS
FLAGS_FILE = "flags.txt"


def define_flags(defaults=None):
    """Defines the `FinetuningOptions` flags plus --data_dir and --do_train/--do_eval/--do_predict.

    The entry point calls `flags.adopt_module_key_flags(finetuning_cli)` so that --helpshort
    lists them.

    Args:
      defaults: {flag: value} for this entry point (run_squad: max_seq_length 384).
    """
    cli.define_flags(FinetuningOptions, defaults=defaults)
    flags.DEFINE_string("data_dir", None, "Folder with the task's files.")
    flags.DEFINE_bool("do_train", False, "Fine-tune on the training set.")
    flags.DEFINE_bool("do_eval", False, "Evaluate on the dev set after every epoch and at the end.")
    flags.DEFINE_bool("do_predict", False, "Write predictions for the test set.")


def require_files(paths):
    """Raises `OptionError` naming the flag of the first path in `{flag: path}` that is no file.

    `flag` may be `data_dir` for a file the task reads from --data_dir by default.
    """
    for flag, path in paths.items():
        value = FLAGS[flag].value
        if not path:
            raise OptionError(flag, value, "is required here.")
        if not tf.io.gfile.exists(path) or tf.io.gfile.isdir(path):
            raise OptionError(flag, value, "no such file." if path == value else
                              f"no such file {path}.")


def print_report(result):
    """The per-epoch dev metrics, the final evaluation and the files written."""
    for entry in result["history"]:
        metrics = {k: round(v, 4) for k, v in entry.get("metrics", {}).items()}
        print(f"epoch {entry['epoch']} step {entry['step']} {entry['train_seconds']:.0f}s "
              f"{metrics}{' (best)' if entry.get('best') else ''}")
    if result["eval"]:
        print("eval:", {k: round(v, 4) for k, v in result["eval"].items()})
    for path in result.get("predictions", []):
        print("wrote", path)


def _claim_output_dir(options, adapter, do_train):
    """Compares the entry point's flags with the run's in `output_dir`, locks it, writes them.

    The same check as pretraining's (`run_directory.write_settings`): settings that change
    what the checkpoints mean must match; --num_train_epochs may grow (the run continues).
    """
    settings = dataclasses.asdict(options)
    settings.update((flag.name, flag.value) for flag in FLAGS.get_key_flags_for_module(sys.argv[0]))
    length = ("num_train_epochs", num_train_steps(options, adapter)) if do_train else None
    write_settings(options.output_dir, settings, RESUMABLE_CHANGES, length, FLAGS_FILE)


def run(build_adapter, check=None):
    """Runs the entry point: checks, `build_adapter(options)`, `run_finetuning`, report.

    Args:
      build_adapter: `FinetuningOptions -> TaskAdapter`; reads the task's data.
      check: `FinetuningOptions -> None`, raising `UserError` for a bad task flag or a
        missing file; runs after the shared checks, before any data is read.
    """
    def main(argv):
        del argv  # cli.run refuses positional arguments
        options = cli.options_from_flags(FinetuningOptions)
        modes = FLAGS.do_train, FLAGS.do_eval, FLAGS.do_predict
        check_finetuning_options(options, *modes)
        if check is not None:
            check(options)
        # Before the data is read: a multi-worker strategy must exist before TensorFlow runs
        # its first op ("Collective ops must be configured at program startup").
        strategy = training_strategy(options) if FLAGS.do_train else None
        adapter = build_adapter(options)
        check_run(adapter, options, *modes)
        logging.set_verbosity(logging.INFO)
        cli.bare_console()
        if not is_chief(strategy):  # the other workers of a multi-worker run write nothing
            print_report(run_finetuning(adapter, options, *modes, strategy=strategy))
            return
        _claim_output_dir(options, adapter, FLAGS.do_train)
        cli.log_to_file(options.output_dir)
        try:
            print_report(run_finetuning(adapter, options, *modes, progress_fn=cli.log_progress,
                                        strategy=strategy))
        finally:
            release_output_dir(options.output_dir)

    cli.run(main)
