"""Imports run down the layers only, and no bert_tf modules import each other in a circle.

Each top-level module or package of bert_tf has a level; a module may import bert_tf code of
a strictly lower level (or of its own package). A new upward import (e.g. layers -> models,
or a library package -> an entry point) fails here with the file and the import named.
Inside `data/` the same holds one level down: the text readers sit below `records/` (offline)
and `pipelines/` (online), which never import each other. A package may also straddle the
layers (`PART_LEVELS`): `checkpoints/`'s readers sit below `models/`, its building side above.
Imports inside functions count: a lazy import is still a dependency, and an import circle
through one still fails.
"""

import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(__file__), "..", "bert_tf")

# Bottom to top. Same level: siblings that never import each other.
LEVELS = {
    "errors": 0, "options": 1, "dtype_policy": 1, "file_io": 1,
    "configs": 2, "tokenization": 2, "checkpoints": 3, "layers": 3, "models": 4,
    "metrics": 5, "losses": 5, "data": 6,
    "training": 7, "inference": 7, "export": 7, "finetuning": 8,
    "reporting": 9, "keras_tasks": 9, "evaluation": 9, "corpus_inference": 10,
    "cli": 11, "finetuning_cli": 12, "run_": 13,  # entry points: run_*.py
}
# Upward imports allowed by name, each with its reason; each must stay inside a function
# (so importing the lower package never loads the upper one) and is left out of the circle
# search. (file under bert_tf/, imported module) -> reason.
ALLOWED_UPWARD = {}
# Parts of a package at their own level, above the package's (LEVELS): `checkpoints/`'s
# readers (formats, registry, weight_map) return numpy weights below `models/`, which reads
# through them (`BertEncoder.from_pretrained`); what builds models from them or starts from
# Keras models sits above. A part may import its package's lower parts, not its higher ones.
PART_LEVELS = {
    "checkpoints": {"building": 5, "convert": 6, "__init__": 7},
}
# Inside a package: its parts, bottom to top (a part not listed imports nothing of its package).
SUB_LEVELS = {
    "data": {"autotune": 0, "document_reader": 0, "sentence_splitter": 0, "beam_runner": 1,
             "records": 2, "pipelines": 2},
}


def _unit(module_path):
    """`data/pipelines/masking.py` -> `data`; `run_ner.py` -> `run_`."""
    first = module_path.split(os.sep)[0].removesuffix(".py")
    return "run_" if first.startswith("run_") else first


def _part(module_path):
    """`data/records/beam_pipeline.py` -> `records`; `data/document_reader.py` ->
    `document_reader`."""
    parts = module_path.split(os.sep)
    return parts[1].removesuffix(".py") if len(parts) > 1 else None


def _level(unit, part):
    """The level of a module of `unit` in its `part` (`PART_LEVELS`, else `LEVELS`)."""
    return PART_LEVELS.get(unit, {}).get(part, LEVELS[unit])


def _imported_modules(path):
    """`(line, dotted name)` of every bert_tf import in a file, inside functions too.

    `from bert_tf.x import y` names `bert_tf.x.y` (a module or a name in `bert_tf.x`).
    """
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        if module and module.split(".")[0] == "bert_tf":
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bert_tf."):
                    yield node.lineno, alias.name


def _function_level_imports(path):
    """The `(line, dotted name)`s of `_imported_modules` that sit inside functions."""
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    functions = [node for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lines = {inner.lineno for function in functions for inner in ast.walk(function)
             if isinstance(inner, (ast.Import, ast.ImportFrom))}
    return {(line, name) for line, name in _imported_modules(path) if line in lines}


def _imports(path, relative):
    """`(line, unit, part)` per bert_tf import: `bert_tf.data.records.x` -> ("data", "records");
    the imports `ALLOWED_UPWARD` names are left out."""
    for line, name in _imported_modules(path):
        if (relative, name) in ALLOWED_UPWARD:
            continue
        parts = name.split(".")
        yield line, parts[1], parts[2] if len(parts) > 2 else None


def _modules():
    for folder, _, names in os.walk(PACKAGE):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, PACKAGE), path


def test_every_module_has_a_level():
    units = {_unit(relative) for relative, _ in _modules()} - {"__init__"}
    assert units <= set(LEVELS), f"give these a level in LEVELS: {sorted(units - set(LEVELS))}"
    for unit, levels in SUB_LEVELS.items():
        parts = {_part(relative) for relative, _ in _modules() if _unit(relative) == unit}
        parts -= {"__init__"}
        missing = sorted(parts - set(levels))
        assert not missing, f"give these a level in SUB_LEVELS[{unit!r}]: {missing}"


@pytest.mark.parametrize("relative, path", list(_modules()), ids=lambda value: value)
def test_imports_point_down(relative, path):
    unit = _unit(relative)
    if unit == "__init__":  # bert_tf/__init__.py: the lazy public namespace, imports nothing
        return
    part = _part(relative)
    level = _level(unit, part)
    for line, target, target_part in _imports(path, relative):
        target_unit = "run_" if target.startswith("run_") else target
        if target_unit not in LEVELS:
            continue
        target_level = _level(target_unit, target_part)
        if target_unit != unit:
            assert target_level < level, (
                f"bert_tf/{relative}:{line} imports bert_tf.{target} "
                f"(level {target_level}) from level {level} ({unit})")
            continue
        assert target_level <= level, (
            f"bert_tf/{relative}:{line} imports bert_tf.{unit}.{target_part} "
            f"(level {target_level}) from level {level} ({unit}/{part})")
        levels = SUB_LEVELS.get(unit, {})
        if part == target_part or part not in levels or target_part not in levels:
            continue
        assert levels[target_part] < levels[part], (
            f"bert_tf/{relative}:{line} imports bert_tf.{unit}.{target_part} "
            f"(level {levels[target_part]} in {unit}/) from level {levels[part]} ({unit}/{part})")


def _module_files():
    """{dotted module name: file} for every module of bert_tf (a package as its __init__)."""
    root = os.path.dirname(os.path.normpath(PACKAGE))
    files = {}
    for _, path in _modules():
        name = os.path.relpath(path, root).removesuffix(".py").replace(os.sep, ".")
        files[name.removesuffix(".__init__")] = path
    return files


def _import_graph():
    """{module: {imported bert_tf module: first line}}: `from pkg import name` -> pkg.name, else
    pkg."""
    files = _module_files()
    package = os.path.normpath(PACKAGE)
    graph = {}
    for module, path in files.items():
        edges = graph.setdefault(module, {})
        relative = os.path.relpath(path, package)
        for line, name in _imported_modules(path):
            if (relative, name) in ALLOWED_UPWARD:
                continue
            target = name if name in files else name.rsplit(".", 1)[0]
            if target in files and target != module:
                edges.setdefault(target, line)
    return graph, files


def find_cycle(graph):
    """One import circle as a list `[a, b, ..., a]`, or None (depth-first search)."""
    state = {}  # module -> "open" while on the search path, "done" after
    path = []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


@pytest.mark.parametrize("relative, name", sorted(ALLOWED_UPWARD))
def test_each_allowed_upward_import_exists_inside_a_function(relative, name):
    path = os.path.join(PACKAGE, relative)
    found = {(line, found) for line, found in _imported_modules(path) if found == name}
    assert found, f"bert_tf/{relative} no longer imports {name}: drop it from ALLOWED_UPWARD"
    outside = sorted(found - _function_level_imports(path))
    assert not outside, (f"bert_tf/{relative}:{outside[0][0]} imports {name} at module level; "
                         "keep it inside the function")


def test_find_cycle_finds_a_circle_and_only_one():
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) is None
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {"b": 1}}) == ["b", "b"]


def test_no_import_cycle_between_bert_tf_modules():
    graph, files = _import_graph()
    cycle = find_cycle(graph)
    if cycle:
        root = os.path.dirname(os.path.normpath(PACKAGE))
        steps = [f"{os.path.relpath(files[a], root)}:{graph[a][b]} imports {b}"
                 for a, b in zip(cycle, cycle[1:])]
        pytest.fail("import circle: " + "; ".join(steps))
