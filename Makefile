# Two commands do all set-up on a fresh machine (see README):
#   make report   -> builds the venv if needed, runs the notebooks that changed with papermill, builds the book
#                    into ./recmetrics-book (REPORT_ARGS='--out DIR' for another folder; the executed chapters
#                    are kept in ~/.cache/recmetrics/books)
#   make test     -> builds the venv if needed, installs Chromium when missing (as root), runs the test suite
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PROFILE ?= quick
DATASET ?= movielens-small
# optional: SCHEDULER=tcp://host:8786 (a Dask cluster), FORCE=1 (execute every chapter again),
# REPORT_ARGS='-p folds=3 --out DIR' (any other `recmetrics report` option)
SCHEDULER ?=
FORCE ?=
REPORT_ARGS ?=

.PHONY: setup report test bench clean

# uv (from PyPI, into the venv) installs the project and its extras: the same versions pip resolves,
# in seconds instead of a minute, compiled to bytecode as pip does (without it, and with
# PYTHONDONTWRITEBYTECODE set, every process compiles what it imports again). Where uv cannot (it
# reads no pip.conf: a private index, a proxy's certificates), pip does, after uv's error
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv && $(VENV)/bin/uv pip install --python $(PY) --quiet --compile-bytecode \
		--upgrade pip -e ".[dev]" \
		|| $(PY) -m pip install --quiet -e ".[dev]"
	touch $@

setup: $(VENV)/.installed

report: setup
	$(VENV)/bin/recmetrics report --profile $(PROFILE) --dataset $(DATASET) \
		$(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(FORCE),--force) $(REPORT_ARGS)

# only the tests need a browser (headless Chromium checks the built pages); `make report` does not
test: setup
	bash .ci/ensure-chromium
	$(PY) -m pytest -q

bench: setup
	$(PY) benchmarks/bench_metrics.py

clean:
	rm -rf $(VENV) recmetrics-book recmetrics-runs build *.egg-info
