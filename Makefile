# The README's two commands: `make run` and `make test`. Both create .venv when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.rc1-installed
CONFIG ?= configs/local.yaml

.PHONY: setup run test bench failpack clean

setup: $(STAMP)

# Without a GPU, install the CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	if ! command -v nvidia-smi >/dev/null 2>&1; then $(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

run: setup
	bin/rc1 advance --all --config $(CONFIG)
	bin/rc1 report --config $(CONFIG)

test: setup
	$(PY) -m pytest

bench: setup
	$(PY) -m rc1.bench

failpack: setup
	bin/rc1 failpack --config $(CONFIG)

clean:
	rm -rf events checkpoints logs reports data/local data/models
