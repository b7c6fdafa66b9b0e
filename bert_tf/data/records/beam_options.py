"""Apache Beam for the data tools: the optional import, pipeline options, running.

Beam is an extra (`pip install 'bert_tf[beam]'`), imported only by the modules
that build pipelines, through `import_beam`, so the rest of bert_tf works
without it. Pipeline options use the flag format of `tfds build
--beam_pipeline_options`: comma-separated `name=value` pairs (or bare boolean names), e.g.
`runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing`.
"""

import re

from bert_tf import errors
from bert_tf.data import document_reader


def import_beam():
    """Returns the `apache_beam` module, or raises `MissingExtraError` naming the `beam` extra."""
    return errors.require_extra("apache_beam", extra="beam")


def pipeline_options(spec=None):
    """Parses `name=value,name=value` into Beam `PipelineOptions` (DirectRunner by default).

    Example:
    >>> pipeline_options("runner=DirectRunner,direct_num_workers=2").get_all_options()["direct_num_workers"]
    2
    """
    beam = import_beam()
    pairs = [p.strip() for p in (spec or "").split(",") if p.strip()]
    if not any(p.startswith("runner=") for p in pairs):
        pairs.append("runner=DirectRunner")
    return beam.options.pipeline_options.PipelineOptions([f"--{p}" for p in pairs])


def run(pipeline):
    """Runs `pipeline` to the end; returns its result (for metrics).

    An `InputError` raised in a worker reaches the caller as itself with its
    one-line message, not as the runner's wrapped stack trace.
    """
    try:
        result = pipeline.run()
        result.wait_until_finish()
    except Exception as error:  # Runners wrap worker errors in their own types.
        message = _input_error_message(error)
        if message:
            raise document_reader.InputError(message) from None
        raise
    return result


def _input_error_message(error):
    """The message of the InputError behind `error`, if any (searching causes and text)."""
    while error is not None:
        if isinstance(error, document_reader.InputError):
            return str(error).split(" [while running")[0].splitlines()[0]
        match = re.search(r"InputError: (.+)", str(error))
        if match:
            return match.group(1).split(" [while running")[0]
        error = error.__cause__ or error.__context__
    return None
