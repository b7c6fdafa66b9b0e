"""Throughput benchmarks of bert_tf, beside the package and never shipped with it.

`benchmark.py` is their one command (`python benchmarks/benchmark.py --what=...`, run from the
repository root; `python -m benchmarks.benchmark` works too); the other modules are imported as
`benchmarks.<module>`. Figures and the commands that gave them: benchmarks/README.md.
"""

import os

# The repository this folder sits in: the benchmarks run its tools/ as a user runs them.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS_DIR = os.path.join(REPO_ROOT, "tools")
CORPUS_DIR = os.path.join(REPO_ROOT, "bert_tf", "data", "corpus")
