"""Hypothesis profiles of the readers' fuzz tests: a short run in the suite, 10,000 cases each
under `make fuzz` (BERT_TF_FUZZ_PROFILE=fuzz).

Each test hands a reader damaged or hostile versions of the committed fixtures (bytes flipped,
files cut short, JSON nested or valued as no writer would) and asserts that the reader either
returns or raises one of the package's errors (`UserError`), within the deadline. A case that
once failed stays in the test as an `@example`, so the suite replays it every run.
"""

import os

from hypothesis import HealthCheck, settings

# Fixtures are copied and read per case; the first case also pays for imports and tracing.
_SLOW_INPUTS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                HealthCheck.data_too_large]
settings.register_profile("suite", max_examples=12, deadline=10_000, database=None,
                          derandomize=True, suppress_health_check=_SLOW_INPUTS)
settings.register_profile("fuzz", max_examples=10_000, deadline=20_000,
                          suppress_health_check=_SLOW_INPUTS)
settings.load_profile(os.environ.get("BERT_TF_FUZZ_PROFILE", "suite"))
