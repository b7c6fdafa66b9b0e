"""What every entry point shares: a quiet start, flags from an options dataclass, one error policy.

Only entry points (`bert_tf/run_*.py`, `tools/*.py`) import this module, and they import it
before anything that imports TensorFlow: after it, TensorFlow's first import is quiet (unless
the user set `TF_CPP_MIN_LOG_LEVEL=0`), without its C++ start-up lines (oneDNN, CUDA,
cpu_feature_guard), and an entry point that never needs TensorFlow never imports it.
`TF_CPP_MIN_LOG_LEVEL=0 python -m bert_tf.run_pretraining ...` brings them back.

Example (an entry point):
>>> from bert_tf import cli
>>> cli.define_flags(PretrainingOptions)                        # doctest: +SKIP
>>> def main(argv):
...     run_pretraining(cli.options_from_flags(PretrainingOptions))
>>> cli.run(main)                                               # doctest: +SKIP
"""

import contextlib
import dataclasses
import importlib.abc
import importlib.util
import logging as std_logging
import os
import sys


@contextlib.contextmanager
def _stderr_to_devnull():
    """Points file descriptor 2 at /dev/null (C++ logging, child processes); yields a copy of the
    old one."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    try:
        yield saved
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class _QuietTensorFlowLoader(importlib.abc.Loader):
    """TensorFlow's own loader, run with file descriptor 2 at /dev/null (see below)."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        try:
            with _stderr_to_devnull():
                self._loader.exec_module(module)
                # Finding the GPUs logs "failed call to cuInit" at ERROR on a machine without
                # one, which TF_CPP_MIN_LOG_LEVEL=2 shows; do it here. (Physical devices only:
                # logical device settings stay open.)
                module.config.list_physical_devices()
        finally:
            module.__loader__ = module.__spec__.loader = self._loader


class _QuietTensorFlowFinder(importlib.abc.MetaPathFinder):
    """Finds `tensorflow` as Python would, once, and hands it `_QuietTensorFlowLoader`."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None:
            spec.loader = _QuietTensorFlowLoader(spec.loader)
        return spec


def _import_tensorflow_quietly():
    """Makes TensorFlow's first import quiet (no C++ start-up lines), unless the user asked for
    them.

    `TF_CPP_MIN_LOG_LEVEL=3` hides TensorFlow's C++ logging; the lines that Abseil writes
    before its logging is initialised (oneDNN, CUDA drivers) ignore it, so the import and the
    search for GPUs run with file descriptor 2 pointed at /dev/null, whatever level the
    environment sets: many users keep `TF_CPP_MIN_LOG_LEVEL=2`, which shows the "failed call
    to cuInit" that a machine without a GPU logs at ERROR. Only `TF_CPP_MIN_LOG_LEVEL=0`
    shows them. An import error still shows: it is raised after stderr is back.

    The import itself waits until something imports TensorFlow (an import hook, not an import
    here): a tool that only reads and writes text (`tools/prepare_corpus.py`) then starts
    without it, ~4 s of CPU sooner.
    """
    level = os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if level == "0" or "tensorflow" in sys.modules:
        return
    sys.meta_path.insert(0, _QuietTensorFlowFinder())


_import_tensorflow_quietly()

from absl import app, flags, logging  # noqa: E402

from bert_tf.errors import StoppedBySignal, UserError  # noqa: E402

FLAGS = flags.FLAGS
EXIT_USER_ERROR = 1
EXIT_INTERRUPTED = 130
LOG_FILE = "log.txt"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_HELP_FLAGS = ("--help", "--helpshort", "--helpfull", "--helpxml", "-h", "-?")


def define_flags(options_cls, flag_values=FLAGS, defaults=None, module_name=None):
    """Defines one absl flag per field of `options_cls` (help, choices and bounds included).

    Args:
      options_cls: a dataclass whose fields were declared with `bert_tf.options.option`.
      flag_values: where to define them (tests pass a fresh `flags.FlagValues()`).
      defaults: {name: value} overriding the dataclass default for this entry point.
      module_name: the module the flags belong to, for `--helpshort`: the caller's by
        default (absl would otherwise file them under this module and not list them).
    """
    defaults = defaults or {}
    module_name = module_name or sys._getframe(1).f_globals["__name__"]
    if module_name == "__main__":  # absl files the main module's flags under its path
        module_name = sys.argv[0]
    for field in dataclasses.fields(options_cls):
        meta = field.metadata
        default = defaults.get(field.name, field.default)
        default = None if default is dataclasses.MISSING else default
        kwargs = dict(name=field.name, default=default, help=meta["help"], flag_values=flag_values,
                      module_name=module_name)
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


def define_beam_pipeline_options(flag_values=FLAGS, module_name=None):
    """Defines `--beam_pipeline_options`, the one Beam flag of every tool that runs a pipeline.

    Its value goes to `data.beam_runner.pipeline_options` and `quiet_beam`; `module_name` as
    in `define_flags` (the caller's by default).
    """
    module_name = module_name or sys._getframe(1).f_globals["__name__"]
    if module_name == "__main__":
        module_name = sys.argv[0]
    flags.DEFINE_string(
        "beam_pipeline_options", None,
        "Apache Beam options as name=value,... (the format of `tfds build`), e.g. "
        "runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing or "
        "runner=DaskRunner,dask_client_address=tcp://HOST:8786 (a Dask cluster) or "
        "runner=DataflowRunner,project=P,region=R,temp_location=gs://B/tmp,setup_file=./setup.py. "
        "Default: DirectRunner, one worker. Beam's own logs are hidden unless these options "
        "name default_sdk_harness_log_level (e.g. =INFO).",
        flag_values=flag_values, module_name=module_name)


def options_from_flags(options_cls, flag_values=FLAGS):
    """The options dataclass filled from parsed flags of the same names."""
    return options_cls(**{field.name: flag_values[field.name].value
                          for field in dataclasses.fields(options_cls)})


class _ConsoleFormatter(std_logging.Formatter):
    """Info lines as they are; warnings and errors with their level in front."""

    def filter(self, record):
        """Keeps bert_tf's info lines and everyone's warnings (not TF's own info chatter)."""
        return record.levelno >= std_logging.WARNING or _PACKAGE_DIR in record.pathname

    def format(self, record):
        message = record.getMessage()
        if record.levelno >= std_logging.WARNING:
            return f"{record.levelname.lower()}: {message}"
        return message


def bare_console():
    """Console log lines without absl's `I1203 07:41:00.123 140 file.py:12]` prefix.

    Progress lines then read as they are; TensorFlow's own info chatter is dropped.
    """
    console = _ConsoleFormatter()
    logging.get_absl_handler().setFormatter(console)
    logging.get_absl_handler().addFilter(console)


def log_to_file(output_dir):
    """Writes absl's full log to `output_dir/log.txt`; the console keeps the bare messages.

    The file keeps absl's prefix, with every line of the run; the console is `bare_console`.
    """
    os.makedirs(output_dir, exist_ok=True)
    handler = std_logging.FileHandler(os.path.join(output_dir, LOG_FILE))
    handler.setFormatter(logging.PythonFormatter())
    logging.get_absl_logger().addHandler(handler)
    bare_console()


class _NotFromBeam(std_logging.Filter):
    """Drops what Apache Beam logs below CRITICAL (from its modules or forwarded from its
    workers)."""

    def filter(self, record):
        beam_module = f"{os.sep}apache_beam{os.sep}" in record.pathname
        return record.levelno >= std_logging.CRITICAL or not beam_module


@contextlib.contextmanager
def quiet_beam(pipeline_options):
    """Keeps Apache Beam's own output off a data tool's console while its pipeline runs.

    Beam logs runner set-up at INFO (a failed Prism download, ports, worker start-up), and a
    worker prints an exception's stack trace before the runner raises it again. The raised
    error is what the entry point reports (a user error as one line, a bug with its trace),
    so Beam's lines only bury it. Inside this context Beam's log records are dropped and
    processes started here (DirectRunner's multi_processing workers, which also print
    TensorFlow's start-up lines) write their stderr to /dev/null; this process's own stderr
    still reaches the console. Naming `default_sdk_harness_log_level` in
    `pipeline_options` turns all of this off, to see what Beam says.

    Args:
      pipeline_options: the tool's `--beam_pipeline_options` (`define_beam_pipeline_options`)
        or None.
    """
    if "default_sdk_harness_log_level=" in (pipeline_options or ""):
        yield
        return
    handler, beam_filter = logging.get_absl_handler(), _NotFromBeam()
    handler.addFilter(beam_filter)
    with _stderr_to_devnull() as console_fd, os.fdopen(os.dup(console_fd), "w",
                                                       buffering=1) as console:
        saved_stderr, sys.stderr = sys.stderr, console
        saved_stream = handler.python_handler.setStream(console)
        try:
            yield
        finally:
            sys.stderr = saved_stderr
            handler.python_handler.setStream(saved_stream)
            handler.removeFilter(beam_filter)


def log_progress(progress):
    """One console line per training loop call: step, loss, accuracies, lr, speed, ETA.

    Args:
      progress: a `bert_tf.training.train_loop.TrainProgress`.
    """
    metrics = " ".join(f"{k}={v:.4f}" for k, v in progress.metrics.items() if k != "loss")
    logging.info("step %d/%d loss=%.4f %s lr=%.3g %.1f seq/s ETA %.0fs", progress.step,
                 progress.num_steps, progress.loss, metrics, progress.learning_rate,
                 progress.sequences_per_second, progress.eta_seconds)


def report_error(program, error):
    """Prints a user error as one line on stderr (and into the run's log file, if any)."""
    message = " ".join(str(error).split("\n")[0].split()) or type(error).__name__
    for handler in logging.get_absl_logger().handlers:
        if isinstance(handler, std_logging.FileHandler):
            handler.emit(std_logging.makeLogRecord({"msg": message, "levelno": 40,
                                                    "levelname": "ERROR"}))
    print(f"{program}: error: {message}", file=sys.stderr, flush=True)


def run(main, program=None, takes_arguments=False):
    """`absl.app.run(main)` with the error policy of every entry point.

    A `UserError` (and a missing or unreadable file) prints one line on stderr and exits 1;
    a run stopped by SIGTERM/SIGINT after saving (`StoppedBySignal`) prints what it saved and
    exits 143/130; Ctrl-C elsewhere exits 130 saying the run resumes; any other exception is
    a bug and keeps its trace.
    Positional arguments are refused unless `takes_arguments` (a stray word, e.g.
    `--do_train true`, would otherwise be ignored silently).
    """
    program = program or os.path.basename(sys.argv[0]).removesuffix(".py")

    def guarded_main(argv):
        try:
            if len(argv) > 1 and not takes_arguments:
                raise UserError(f"unexpected argument(s) {argv[1:]}; flags are written "
                                "--name=value (booleans --name or --noname).")
            return main(argv)
        except (UserError, FileNotFoundError, IsADirectoryError, NotADirectoryError,
                PermissionError) as error:
            report_error(program, error)
            sys.exit(EXIT_USER_ERROR)
        except StoppedBySignal as stopped:
            print(f"{program}: {stopped}", file=sys.stderr, flush=True)
            sys.exit(stopped.exit_code)
        except KeyboardInterrupt:
            print(f"{program}: interrupted; rerun the same command to resume from the last "
                  "checkpoint.", file=sys.stderr, flush=True)
            sys.exit(EXIT_INTERRUPTED)

    def parse_flags(argv):
        try:
            return FLAGS(argv)
        except flags.Error as error:  # e.g. a value below the flag's bound
            report_error(program, error)
            sys.exit(EXIT_USER_ERROR)

    FLAGS.set_default("verbosity", logging.INFO)  # progress lines; --verbosity=-1 hides them
    try:
        app.run(guarded_main, flags_parser=parse_flags)
    except SystemExit as stop:
        if stop.code == 1 and any(arg.split("=")[0] in _HELP_FLAGS for arg in sys.argv[1:]):
            sys.exit(0)  # absl exits 1 after printing the help a user asked for
        raise
