"""What every entry point shares: a quiet start, flags from an options dataclass, one error policy.

Only entry points (`bert_tf/run_*.py`, `tools/*.py`) import this module, and they import it
before anything that imports TensorFlow: importing it sets `TF_CPP_MIN_LOG_LEVEL=3` (unless the
user set it), which silences TensorFlow's C++ start-up lines (oneDNN, CUDA, cpu_feature_guard).
`TF_CPP_MIN_LOG_LEVEL=0 python -m bert_tf.run_pretraining ...` brings them back.

Example (an entry point):
>>> from bert_tf import cli
>>> cli.define_flags(PretrainingOptions)                        # doctest: +SKIP
>>> def main(argv):
...     run_pretraining(cli.options_from_flags(PretrainingOptions))
>>> cli.run(main)                                               # doctest: +SKIP
"""

import dataclasses
import logging as std_logging
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import app, flags, logging  # noqa: E402

from bert_tf.errors import UserError  # noqa: E402

FLAGS = flags.FLAGS
EXIT_USER_ERROR = 1
EXIT_INTERRUPTED = 130
LOG_FILE = "log.txt"


def define_flags(options_cls, flag_values=FLAGS, defaults=None):
    """Defines one absl flag per field of `options_cls` (help, choices and bounds included).

    Args:
      options_cls: a dataclass whose fields were declared with `bert_tf.options.option`.
      flag_values: where to define them (tests pass a fresh `flags.FlagValues()`).
      defaults: {name: value} overriding the dataclass default for this entry point.
    """
    defaults = defaults or {}
    for field in dataclasses.fields(options_cls):
        meta = field.metadata
        default = defaults.get(field.name, field.default)
        default = None if default is dataclasses.MISSING else default
        kwargs = dict(name=field.name, default=default, help=meta["help"], flag_values=flag_values)
        if meta.get("choices"):
            flags.DEFINE_enum(enum_values=list(meta["choices"]), **kwargs)
        elif field.type is bool:
            flags.DEFINE_bool(**kwargs)
        elif field.type in (int, float):
            define = flags.DEFINE_integer if field.type is int else flags.DEFINE_float
            define(lower_bound=meta.get("lower_bound"), upper_bound=meta.get("upper_bound"),
                   **kwargs)
        else:
            flags.DEFINE_string(**kwargs)


def options_from_flags(options_cls, flag_values=FLAGS):
    """The options dataclass filled from parsed flags of the same names."""
    return options_cls(**{field.name: flag_values[field.name].value
                          for field in dataclasses.fields(options_cls)})


def log_to_file(output_dir):
    """Sends absl's full log to `output_dir/log.txt`; the console keeps warnings and errors.

    Progress and results reach the console through the entry point's own `print`s, without
    absl's `I1203 07:41:00.1 140 file.py:12]` prefix.
    """
    os.makedirs(output_dir, exist_ok=True)
    handler = std_logging.FileHandler(os.path.join(output_dir, LOG_FILE))
    handler.setFormatter(logging.PythonFormatter())
    logging.get_absl_logger().addHandler(handler)
    logging.get_absl_handler().setLevel(std_logging.WARNING)
    logging.get_absl_handler().setFormatter(std_logging.Formatter("%(levelname)s: %(message)s"))


def report_error(program, error):
    """Prints a user error as one line on stderr."""
    message = " ".join(str(error).split("\n")[0].split()) or type(error).__name__
    print(f"{program}: error: {message}", file=sys.stderr, flush=True)


def run(main, program=None):
    """`absl.app.run(main)` with the error policy of every entry point.

    A `UserError` (and a missing or unreadable file) prints one line on stderr and exits 1;
    Ctrl-C exits 130 saying the run resumes; any other exception is a bug and keeps its trace.
    """
    program = program or os.path.basename(sys.argv[0]).removesuffix(".py")

    def guarded_main(argv):
        try:
            return main(argv)
        except (UserError, FileNotFoundError, IsADirectoryError, NotADirectoryError,
                PermissionError) as error:
            logging.error("%s", error)
            report_error(program, error)
            sys.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            print(f"{program}: interrupted; rerun the same command to resume from the last "
                  "checkpoint.", file=sys.stderr, flush=True)
            sys.exit(EXIT_INTERRUPTED)

    app.run(guarded_main)
