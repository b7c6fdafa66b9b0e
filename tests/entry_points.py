"""Runs the entry points (tools/*.py, bert_tf/run_*.py) as a user does, or in this process.

`run_entry_point` starts a fresh interpreter: the only way to see the console a user sees (one
error line, no TensorFlow start-up chatter, the exit code). `call_entry_point` runs the same
`__main__` block in this process under absl's `flagsaver`, skipping the ~4 s TensorFlow start-up
of a new process: error cases use it. Both return a `Run`, which `assert_user_error` checks.

    result = call_entry_point("tools/extract_features.py", "--model_dir=nope")
    assert_user_error(result, "--input_file")  # a required flag is missing
"""

import contextlib
import dataclasses
import hashlib
import io
import os
import runpy
import socket
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclasses.dataclass
class Run:
    """What an entry point did: the program name it reports errors under, exit code, output."""

    program: str
    returncode: int
    stdout: str
    stderr: str


def _program(entry):
    """`tools/x.py` -> `x`; `bert_tf.run_ner` -> `run_ner` (the names `cli.run` prints)."""
    return os.path.basename(entry).removesuffix(".py").rsplit(".", 1)[-1]


def _is_path(entry):
    return entry.endswith(".py")


def run_entry_point(entry, *args, timeout=600, env=None, cwd=REPO):
    """Runs `entry` (`tools/<name>.py` or a module `bert_tf.run_*`) in a new interpreter.

    `env`: variables set beside the test's environment.
    """
    target = [os.path.join(REPO, entry)] if _is_path(entry) else ["-m", entry]
    result = subprocess.run([sys.executable, *target, *map(str, args)], capture_output=True,
                            text=True, cwd=cwd, timeout=timeout,
                            env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="",
                                     **(env or {})))
    return Run(_program(entry), result.returncode, result.stdout, result.stderr)


@contextlib.contextmanager
def _absl_logging_kept():
    """Takes back what a run changes in absl's logging: `cli.log_to_file`'s file handler,
    `cli.bare_console`'s formatter and filter, the verbosity."""
    from absl import logging

    logger, console = logging.get_absl_logger(), logging.get_absl_handler()
    handlers, formatter, filters = list(logger.handlers), console.formatter, list(console.filters)
    verbosity = logging.get_verbosity()
    try:
        yield
    finally:
        for handler in set(logger.handlers) - set(handlers):
            logger.removeHandler(handler)
            handler.close()
        console.setFormatter(formatter)
        console.filters[:] = filters
        logging.set_verbosity(verbosity)


def call_entry_point(entry, *args):
    """Runs `entry`'s `__main__` block in this process, as `run_entry_point` would.

    Flags are defined and parsed afresh and taken back afterwards (`flagsaver`), so entry
    points that define the same flag names run one after another. An exception other than
    the `SystemExit` of `cli.run` is a bug and propagates with its trace.
    """
    from absl import app, logging  # noqa: F401  (their flags exist before flagsaver saves)
    from absl.testing import flagsaver

    app.define_help_flags()  # once per process: defined inside flagsaver, they would go after it
    path = os.path.join(REPO, entry) if _is_path(entry) else entry
    stdout, stderr = io.StringIO(), io.StringIO()
    saved_argv = sys.argv
    sys.argv = [path, *map(str, args)]
    returncode = 0
    try:
        with flagsaver.flagsaver(), _absl_logging_kept(), contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            if _is_path(entry):
                runpy.run_path(path, run_name="__main__")
            else:
                runpy.run_module(entry, run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        returncode = 0 if stop.code is None else stop.code
    finally:
        sys.argv = saved_argv
    return Run(_program(entry), returncode, stdout.getvalue(), stderr.getvalue())


def snapshot(*roots):
    """`{path: sha256}` of every file under `roots` (files or folders), hidden ones included."""
    files = {}
    for root in map(str, roots):
        paths = [root] if os.path.isfile(root) else [
            os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]
        for path in paths:
            with open(path, "rb") as f:
                files[path] = hashlib.sha256(f.read()).hexdigest()
    return files


def assert_user_error(result, *fragments):
    """Exit 1, no traceback, one `program: error: ...` line holding every fragment."""
    assert result.returncode == 1, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines()
             if line.startswith(f"{result.program}: error:")]
    assert len(lines) == 1, result.stderr[-3000:]
    for fragment in map(str, fragments):
        assert fragment in lines[0], (fragment, lines[0])


def free_ports(count):
    """`count` TCP ports of 127.0.0.1 that nothing listens on now (for a TF_CONFIG cluster)."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
