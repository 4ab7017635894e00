# The README's two commands: `make run` and `make test`. Both create .venv when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.rc1-installed
CONFIG ?= configs/local.yaml

.PHONY: run-recorded setup run test test-unit lint docs bench reader reader-check gpu-check gpu-rehearsal wheels preflight round1 round2 train resume failpack clean

setup: $(STAMP)

# Without a GPU, install the CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build, and so
# would torch==2.13.0 from PyPI on Linux (its Linux wheels are CUDA builds). `+cpu` is only on pytorch.org's CPU
# index (or a local wheel folder that mirrors it); --retries 0 keeps a machine that cannot reach it from waiting on it.
# macOS wheels on PyPI are CPU builds already.
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	if ! command -v nvidia-smi >/dev/null 2>&1; then \
	  if [ "$$(uname)" = Linux ]; then \
	    $(PY) -m pip install -q --retries 0 'torch==2.13.0+cpu' --extra-index-url $(TORCH_CPU_INDEX); \
	  else $(PY) -m pip install -q torch==2.13.0; fi; \
	fi
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

run: setup
	bin/rc1 advance --all --config $(CONFIG)
	bin/rc1 report --no-verdicts --config $(CONFIG)

# The recorded default beside it (rc1/config/recorded.py: the tiny model, every tool step written into the prompt;
# what make run ran until issue 50), a run of its own named `recorded`
RECORDED_SETS = --set run.name=recorded $$($(PY) -m rc1.config.recorded)
run-recorded: setup
	bin/rc1 advance --all --config $(CONFIG) $(RECORDED_SETS)
	bin/rc1 report --no-verdicts --config $(CONFIG) $(RECORDED_SETS)

# ruff (pyproject.toml [tool.ruff]: lint and format, line length 120) before the suite, which runs on every core
# (pytest-xdist: a test to a worker, or a whole module where it builds a module-scoped fixture; tests/conftest.py)
# --durations: the slowest tests in every CI log, where the suite's long poles are found
test: setup lint
	$(PY) -m pytest -n auto --dist loadgroup --durations=25

# the edit loop: tests/unit/ only (no training, no launches, no simulations), about a minute
test-unit: setup lint
	$(PY) -m pytest tests/unit

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# the generated references (docs/cli.md, docs/config.md, docs/tables.md); tests/unit keeps them current
docs: setup
	$(PY) -m rc1.cli.reference docs
	bin/rc1 ls --markdown > docs/tables.md

bench: setup
	$(PY) -m rc1.bench

# The built-in reader (rc1/reader/): `make reader` trains it from scratch into rc1/reader/weights (one CPU thread,
# 35–55 minutes here) and prints the sha256 to pin in rc1/reader/shipped.py; `make reader-check` trains it again in a
# temp folder and exits 3 unless the pinned files come out bit for bit.
reader: setup
	$(PY) -m rc1.reader build

reader-check: setup
	$(PY) -m rc1.reader check

# The production path's device check (rc1/bench/gpu_check.py): on a CUDA machine the check, without CUDA its dry run
# (small models on the CPU); its last line on stdout is one JSON object. It needs no setup where rc1's dependencies are
# importable: on an offline GPU node, `make gpu-check WHEELS=DIR` installs the wheels of `make wheels` into .gpu-site
# first, and GPU_PY (default: .venv's python, else python3) runs it.
GPU_PY ?= $(if $(wildcard $(PY)),$(PY),python3)
gpu-check:
	$(if $(WHEELS),$(GPU_PY) -m pip install -q --no-index --no-deps --no-compile --upgrade --target .gpu-site $(WHEELS)/*.whl)
	PYTHONPATH=$(CURDIR)/.gpu-site:$(CURDIR) $(GPU_PY) -m rc1.bench.gpu_check $(ARGS)

# The device's library versions rehearsed here (rc1/bench/rehearsal.py): the H200 image's transformers, huggingface-hub,
# tokenizers, numpy, … installed into .rehearsal-site and put first, then gpu-check's dry run on them (torch and the
# Python stay this machine's). ARGS as gpu-check's.
gpu-rehearsal: setup
	$(PY) -m rc1.bench.rehearsal --image configs/images/h200.txt --site .rehearsal-site
	PYTHONPATH=$(CURDIR)/.rehearsal-site:$(CURDIR) $(PY) -m rc1.bench.gpu_check --dry-run --work .rehearsal-check $(ARGS)

# The wheels an offline CUDA node needs beyond a CUDA PyTorch image (rc1/bench/wheels.py): make wheels DIR=.whl
# [HAVE=file of the image's packages, name==version where known: exit 3 when a wheel's requirement is unmet]
# [PYTHON_VERSION=3.12]. Needs this .venv and a package index.
wheels: setup
	$(PY) -m rc1.bench.wheels --dir $(DIR) $(if $(HAVE),--have $(HAVE)) $(if $(PYTHON_VERSION),--python-version $(PYTHON_VERSION))

# One stage at a time (the seed's names), each through the same state machine `make run` goes through.
preflight: setup
	bin/rc1 advance --until R2_PASSED --config $(CONFIG)

round1: setup
	bin/rc1 preflight --round 1 --config $(CONFIG)

round2: setup
	bin/rc1 preflight --round 2 --config $(CONFIG)

train: setup
	bin/rc1 train --config $(CONFIG)

resume: setup
	bin/rc1 advance --all --config $(CONFIG)

failpack: setup
	bin/rc1 failpack --config $(CONFIG)

clean:
	rm -rf events checkpoints logs reports data/local data/models
