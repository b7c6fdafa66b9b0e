"""Imports run down the layers only: the picture in WORKSPACE.md ("Layers"), enforced.

Each top-level module or package of bert_tf has a level; a module may import bert_tf code of
a strictly lower level (or of its own package). A new upward import (e.g. layers -> models,
or a library package -> an entry point) fails here with the file and the import named.
"""

import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(__file__), "..", "bert_tf")

# Bottom to top. Same level: siblings that never import each other.
LEVELS = {
    "errors": 0, "options": 1, "dtype_policy": 1, "file_io": 1,
    "configs": 2, "layers": 3, "model_dir_reader": 3, "models": 4,
    "tokenization": 5, "metrics": 5, "checkpoints": 6, "data": 6,
    "training": 7, "inference": 7, "export": 7, "tasks": 8,
    "reporting": 9, "keras_tasks": 9,
    "cli": 11, "finetuning_cli": 12, "run_": 13,  # entry points: run_*.py
}


def _unit(module_path):
    """`bert_tf/data/masking.py` -> `data`; `bert_tf/run_ner.py` -> `run_`."""
    first = module_path.split(os.sep)[0].removesuffix(".py")
    return "run_" if first.startswith("run_") else first


def _imports(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bert_tf"):
            parts = node.module.split(".")
            targets = [parts[1]] if len(parts) > 1 else [alias.name for alias in node.names]
            for target in targets:
                yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bert_tf."):
                    yield node.lineno, alias.name.split(".")[1]


def _modules():
    for folder, _, names in os.walk(PACKAGE):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, PACKAGE), path


def test_every_module_has_a_level():
    units = {_unit(relative) for relative, _ in _modules()} - {"__init__"}
    assert units <= set(LEVELS), f"give these a level in LEVELS: {sorted(units - set(LEVELS))}"


@pytest.mark.parametrize("relative, path", list(_modules()), ids=lambda value: value)
def test_imports_point_down(relative, path):
    unit = _unit(relative)
    if unit == "__init__":  # bert_tf/__init__.py: the lazy public namespace, imports nothing
        return
    for line, target in _imports(path):
        target_unit = "run_" if target.startswith("run_") else target
        if target_unit == unit or target_unit not in LEVELS:
            continue
        assert LEVELS[target_unit] < LEVELS[unit], (
            f"bert_tf/{relative}:{line} imports bert_tf.{target} "
            f"(level {LEVELS[target_unit]}) from level {LEVELS[unit]} ({unit})")
