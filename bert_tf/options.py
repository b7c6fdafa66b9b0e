"""Run options: dataclass fields that carry their help text and allowed values.

One options dataclass per entry point (`PretrainingOptions`, `FinetuningOptions`) declares
every setting once with `option(...)`; `bert_tf.cli` turns it into absl flags of the same
names, and `check_options` enforces the same bounds for callers that skip the flags (tests,
notebooks). Errors name the option; as option and flag names are equal, entry points print
them as `--name=value`.

Example:
>>> @dataclasses.dataclass
... class Options:
...     batch_size: int = option(32, "Sequences per step.", lower_bound=1)
>>> check_options(Options(batch_size=0))
Traceback (most recent call last):
...
bert_tf.options.OptionError: --batch_size=0: must be at least 1.
"""

import dataclasses

from bert_tf.errors import UserError


class OptionError(UserError, ValueError):
    """An option value out of its allowed range or set."""

    def __init__(self, name, value, reason):
        self.name, self.value, self.reason = name, value, reason
        super().__init__(f"--{name} {reason}" if value is None else f"--{name}={value}: {reason}")


def option(default, help_text, *, choices=None, lower_bound=None, upper_bound=None,
           required=False):
    """A dataclass field with the metadata that `bert_tf.cli` and `check_options` read."""
    return dataclasses.field(default=default, metadata={
        "help": help_text, "choices": choices, "lower_bound": lower_bound,
        "upper_bound": upper_bound, "required": required})


def check_options(options):
    """Raises `OptionError` for the first field outside its declared choices or bounds."""
    for field in dataclasses.fields(options):
        meta, value = field.metadata, getattr(options, field.name)
        if meta.get("required") and value in (None, ""):
            raise OptionError(field.name, None, "is required.")
        if value is None:
            continue
        if meta.get("choices") and value not in meta["choices"]:
            raise OptionError(field.name, value, f"choose one of {list(meta['choices'])}.")
        if meta.get("lower_bound") is not None and value < meta["lower_bound"]:
            raise OptionError(field.name, value, f"must be at least {meta['lower_bound']}.")
        if meta.get("upper_bound") is not None and value > meta["upper_bound"]:
            raise OptionError(field.name, value, f"must be at most {meta['upper_bound']}.")
