"""The one base class of mistakes in what a user gave: a flag, a file, a config, a record.

Library code raises a subclass of `UserError` with a one-line message that says what is wrong
and where (option, file, line, key) and, where it can, how to fix it. Entry points
(`bert_tf.cli.run`) print such an error as one line on stderr and exit non-zero; any other
exception is a bug and keeps its stack trace.
"""


class UserError(Exception):
    """A mistake in the user's input; its message is the whole report.

    Example:
    >>> raise UserError("config.json: `hidden_size` must be an integer, got '768'.")
    Traceback (most recent call last):
    ...
    bert_tf.errors.UserError: config.json: `hidden_size` must be an integer, got '768'.
    """


class CheckpointError(UserError, ValueError):
    """A checkpoint or model directory that cannot be read or converted (file, tensor named)."""


def checkpoint_read_error(path, error):
    """The `CheckpointError` for a checkpoint file TensorFlow failed to read (truncated, cut)."""
    reason = str(error).strip().split("\n")[0] or type(error).__name__
    return CheckpointError(
        f"Checkpoint {path} is damaged or half-written ({reason}; an interrupted download or "
        "copy?); download it again, or rerun the conversion or training that made it.")


class StoppedBySignal(Exception):
    """A run stopped cleanly on SIGTERM/SIGINT; its message says what was saved.

    Entry points print the message as one line and exit 128 + the signal's number, as a
    shell reports a process that a signal ended.
    """

    exit_code = 130


class MissingExtraError(UserError):
    """An optional dependency is not installed; the message names the extra to install."""


def require_extra(module_name, extra):
    """Imports an optional dependency, or says which `bert_tf[extra]` installs it.

    Example:
    >>> safetensors = require_extra("safetensors", extra="hf")  # doctest: +SKIP
    """
    import importlib

    try:
        return importlib.import_module(module_name)
    except ImportError:
        raise MissingExtraError(
            f"`{module_name}` is not installed; install it with "
            f"`pip install 'bert_tf[{extra}]'`.") from None
