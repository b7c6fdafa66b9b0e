"""Apache Beam for every bert_tf pipeline: the optional import, pipeline options, running.

The data tools (pretraining records, vocabularies) and corpus inference build their pipelines
on these helpers; the tools' `--beam_pipeline_options` flag is `cli.define_beam_pipeline_options`.
Beam is an extra (`pip install 'bert_tf[beam]'`), imported only by the modules
that build pipelines, through `import_beam`, so the rest of bert_tf works
without it. Pipeline options use the flag format of `tfds build
--beam_pipeline_options`: comma-separated `name=value` pairs (or bare boolean names), e.g.
`runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing`.

`runner=DaskRunner,dask_client_address=tcp://HOST:8786` runs on a Dask `distributed`
cluster (Beam's DaskRunner; `dask scheduler` + `dask worker`, or Kubernetes/YARN/HPC
deployments). That runner gives no metrics and computes only the pipeline's last step
(everything else must lead into it), so the pipelines here count through their data and end in
one step; its `Create` makes `dask_npartitions` bag partitions, which bound the parallelism of
every later step: `dask_partitions` picks one per input file unless the options name it.
"""

import contextlib
import logging as std_logging
import os
import re

from absl import logging

from bert_tf import errors
from bert_tf.data import document_reader

_DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
# Bag partitions a Dask run makes by default (one per input file, at most this many).
MAX_DASK_PARTITIONS = 256


def import_beam():
    """Returns the `apache_beam` module, or raises `MissingExtraError` naming the `beam` extra."""
    return errors.require_extra("apache_beam", extra="beam")


def pipeline_options(spec=None):
    """Parses `name=value,name=value` into Beam `PipelineOptions` (DirectRunner by default).

    Example:
    >>> options = pipeline_options("runner=DirectRunner,direct_num_workers=2")
    >>> options.get_all_options()["direct_num_workers"]
    2
    """
    beam = import_beam()
    pairs = [p.strip() for p in (spec or "").split(",") if p.strip()]
    if not any(p.startswith("runner=") for p in pairs):
        pairs.append("runner=DirectRunner")
    # Beam knows the Dask runner only by its module path.
    pairs = [f"runner={_DASK_RUNNER}" if p == "runner=DaskRunner" else p for p in pairs]
    if f"runner={_DASK_RUNNER}" in pairs:
        errors.require_extra("distributed", extra="beam")
        # Registers the dask_* options (PipelineOptions parses those of the classes imported).
        import apache_beam.runners.dask.dask_runner  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    return beam.options.pipeline_options.PipelineOptions([f"--{p}" for p in pairs])


def is_dask(options):
    """Whether `options` (Beam `PipelineOptions`) name the DaskRunner."""
    runner = options.view_as(import_beam().options.pipeline_options.StandardOptions).runner
    return runner in ("DaskRunner", _DASK_RUNNER)


def for_workers(paths):
    """`paths` with the local ones made absolute (a worker's folder differs), URLs as they are."""
    return [p if "://" in p else os.path.abspath(p) for p in paths]


def dask_partitions(options, num_inputs):
    """For a Dask run: sets `dask_npartitions` to one per input (at most 256) unless given.

    The DaskRunner's default (128 elements per partition) would put a corpus of up to 128 files
    in one partition, hence on one worker, for the whole pipeline. Returns the count; None for
    other runners and where the options set `dask_partition_size`.
    """
    if not is_dask(options):
        return None
    from apache_beam.runners.dask.dask_runner import DaskOptions  # pylint: disable=import-outside-toplevel

    dask_options = options.view_as(DaskOptions)
    if dask_options.npartitions is None and dask_options.partition_size is None:
        dask_options.npartitions = max(1, min(num_inputs, MAX_DASK_PARTITIONS))
    return dask_options.npartitions


def run(pipeline):
    """Runs `pipeline` to the end; returns its result.

    An `InputError` raised in a worker reaches the caller as itself with its
    one-line message, not as the runner's wrapped stack trace. A Dask scheduler that
    does not answer is a `UserError` naming the address; a Dask run with fewer input files
    than worker threads logs one warning as it starts; the Dask client is closed after.
    """
    result = None
    quiet = _quiet_dask_logs(pipeline.options)
    try:
        try:
            result = pipeline.run()
        except OSError as error:  # Only the Dask client connects while the pipeline starts.
            if not is_dask(pipeline.options):
                raise
            address = pipeline.options.get_all_options().get("address") or "a new local cluster"
            raise errors.UserError(
                f"no Dask scheduler answered at {address} ({error}): start one (`dask scheduler`, "
                "then `dask worker <address>`) or fix dask_client_address in "
                "--beam_pipeline_options") from None
        if is_dask(pipeline.options):
            _warn_idle_dask_threads(pipeline.options, result.client)
        result.wait_until_finish()
    except Exception as error:  # Runners wrap worker errors in their own types.
        message = _input_error_message(error)
        if message:
            raise document_reader.InputError(message) from None
        raise
    finally:
        # The DaskRunner's client; left open, it retries the scheduler forever.
        client = getattr(result, "client", None)
        if client is not None:
            client.close()
        quiet.close()
    return result


def _warn_idle_dask_threads(options, client):
    """Logs one warning when a Dask run has fewer bag partitions than its workers have threads.

    The partitions (one per input file, `dask_partitions`) bound the parallelism of every step,
    so the other threads idle the whole run; the user can split the input into more files.
    """
    from apache_beam.runners.dask.dask_runner import DaskOptions  # pylint: disable=import-outside-toplevel

    partitions = options.view_as(DaskOptions).npartitions
    threads = sum(client.nthreads().values())
    if partitions is not None and partitions < threads:
        logging.warning("Dask: %d bag partition(s) (one per input file) for %d worker threads: "
                        "%d stay idle the whole run; split the input into at least %d files.",
                        partitions, threads, threads - partitions, threads)


def _quiet_dask_logs(options):
    """For a Dask run: keeps `distributed`'s INFO/WARNING lines (a local cluster's start and stop,
    forty lines a run) off the console until `.close()`, unless the options name
    `default_sdk_harness_log_level` (as for Beam's own logs, `cli.quiet_beam`)."""
    stack = contextlib.ExitStack()
    given = options.get_all_options(drop_default=True)
    if is_dask(options) and "default_sdk_harness_log_level" not in given:
        logger = std_logging.getLogger("distributed")
        stack.callback(logger.setLevel, logger.level)
        logger.setLevel(std_logging.ERROR)
    return stack


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
