"""The suite's own order (tests/conftest.py): modules with the most slow tests first, whole."""

import types

import pytest

from tests.conftest import _long_modules_first


def _item(nodeid, slow=False):
    marker = pytest.mark.slow.mark if slow else None
    return types.SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: marker)


def test_modules_with_more_slow_tests_come_first_and_stay_whole():
    items = [_item("a.py::1"), _item("b.py::1", slow=True), _item("a.py::2"),
             _item("c.py::1", slow=True), _item("c.py::2", slow=True), _item("b.py::2")]
    ordered = [item.nodeid for item in _long_modules_first(items)]
    # c has two slow tests, b one, a none; within a module the collection's order is kept.
    assert ordered == ["c.py::1", "c.py::2", "b.py::1", "b.py::2", "a.py::1", "a.py::2"]


def test_this_session_runs_modules_whole_with_the_most_slow_tests_first(request):
    items = request.session.items
    modules = [item.nodeid.split("::")[0] for item in items]
    # Each module's tests are contiguous (its module fixtures are built once per worker).
    runs = [module for i, module in enumerate(modules) if i == 0 or modules[i - 1] != module]
    assert len(runs) == len(set(runs))
    slow = [sum(1 for item in items if item.nodeid.split("::")[0] == module
                and item.get_closest_marker("slow")) for module in runs]
    assert slow == sorted(slow, reverse=True)
