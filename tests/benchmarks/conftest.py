"""The benchmarks' tests run `benchmarks/benchmark.py` as a user runs it, on the tools' tiny model."""

from tests.tools.conftest import tiny_model_dir  # noqa: F401  (the encoder-only tiny model directory)
