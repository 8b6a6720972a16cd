# Two commands set everything up on a fresh machine: `make demo`, `make test`.
# Two environments, one per SageMaker Python SDK major: .venv3 (v3, what pip brings today)
# and .venv (v2); `make test` tests both (see "test" below).
PYTHON ?= python3
VENV ?= .venv
VENV3 ?= .venv3
PY := $(VENV)/bin/python
PY3 := $(VENV3)/bin/python
STAMP := $(VENV)/.installed
STAMP3 := $(VENV3)/.installed
LINT_STAMP := $(VENV3)/.lint-installed
V2_SDK := 'sagemaker>=2.257,<3'
V3_SDK := 'sagemaker>=3'
# The AWS CLI v1 from PyPI for tests/server/test_aws_cli.py, in its own environment (its botocore
# pin clashes with ours); the tests find it at $(AWSCLI_VENV)/bin/aws.
AWSCLI_VENV ?= .venv-awscli
AWSCLI_STAMP := $(AWSCLI_VENV)/.installed
# The AWS SDK for JavaScript v3 (npm), for the test of another language against the server.
NODE_SDK ?= .node-sdk
NODE_SDK_STAMP := $(NODE_SDK)/.installed

# Multi-instance jobs' launchers in the tests (docs/local-runtime.md, "Multi-instance jobs"): Open MPI
# from Debian's packages when mpirun is missing (non-interactive; ~30 s), then in each environment
# mpi4py (built against it) and a CPU build of PyTorch: pinned, as a newer range pulls a multi-GB
# CUDA build (~50 s per environment here, ~750 MB). Jobs find them as their "image" has them: a
# job's Python sees the calling environment's site-packages (runtime/environments.py). paramiko: v2's
# `@remote(use_mpirun=True)` driver imports it in the job (v3's SDK already depends on it).
TORCH := 'torch==2.13.0'
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
MPI_STAMP := $(VENV)/.distributed-installed
MPI_STAMP3 := $(VENV3)/.distributed-installed

.PHONY: demo demo-v2 demo-v3 test test-v2 test-v3 test-v2-all bench install clean lint node-sdk open-mpi

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' $(V2_SDK)
	touch $(STAMP)

$(STAMP3): pyproject.toml
	test -x $(PY3) || $(PYTHON) -m venv $(VENV3)
	$(PY3) -m pip install --quiet --upgrade pip
	$(PY3) -m pip install --quiet -e '.[test]' $(V3_SDK)
	touch $(STAMP3)

open-mpi:
	command -v mpirun > /dev/null && command -v mpicc > /dev/null || { \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev; }

$(MPI_STAMP): $(STAMP) | open-mpi
	$(PY) -m pip install --quiet $(TORCH) mpi4py paramiko
	touch $(MPI_STAMP)

$(MPI_STAMP3): $(STAMP3) | open-mpi
	$(PY3) -m pip install --quiet $(TORCH) mpi4py
	touch $(MPI_STAMP3)

$(AWSCLI_STAMP):
	test -x $(AWSCLI_VENV)/bin/python || $(PYTHON) -m venv $(AWSCLI_VENV)
	$(AWSCLI_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(AWSCLI_VENV)/bin/python -m pip install --quiet awscli
	touch $(AWSCLI_STAMP)

$(NODE_SDK_STAMP):
	npm install --silent --no-audit --no-fund --prefix $(NODE_SDK) '@aws-sdk/client-sagemaker@3'
	touch $(NODE_SDK_STAMP)

node-sdk: $(NODE_SDK_STAMP)

install: $(STAMP) $(STAMP3)

# ruff and mypy (the `lint` extra) in the v3 environment; what they check is set in pyproject.toml.
$(LINT_STAMP): $(STAMP3) pyproject.toml
	$(PY3) -m pip install --quiet -e '.[lint]'
	touch $(LINT_STAMP)

lint: $(LINT_STAMP)
	$(PY3) -m ruff check .
	$(PY3) -m ruff format --check .
	$(PY3) -m mypy

demo: demo-v3 demo-v2

# The examples that use the SDK's default backend keep their state (docs/durability.md): the demo
# gives them a per-user directory of its own, emptied first, so that `make demo` can run again.
DEMO_HOME := $(CURDIR)/.demo-home

demo-v3: $(STAMP3)
	$(PY3) examples/warm_pools.py
	$(PY3) examples/training_plan.py
	$(PY3) examples/timeline_picture.py
	mkdir -p $(DEMO_HOME)
	$(PY3) examples/what_if.py $(DEMO_HOME)/what-if.png
	$(VENV3)/bin/sagemaker-plans-local reset --yes --root $(DEMO_HOME)/v3/default > /dev/null
	SAGEMAKER_PLANS_LOCAL_HOME=$(DEMO_HOME)/v3 $(PY3) examples/v3_model_trainer.py

demo-v2: $(STAMP)
	$(VENV)/bin/sagemaker-plans-local reset --yes --root $(DEMO_HOME)/v2/default > /dev/null
	SAGEMAKER_PLANS_LOCAL_HOME=$(DEMO_HOME)/v2 SAGEMAKER_SUPPRESS_V2_WARNING=1 $(PY) examples/seed_warm_pool_estimator.py
	SAGEMAKER_PLANS_LOCAL_HOME=$(DEMO_HOME)/v2 SAGEMAKER_SUPPRESS_V2_WARNING=1 $(PY) examples/training_plan_estimator.py

# `make test`: both environments at once (their outputs kept apart), with pytest-xdist.
# - test-v3: the whole suite under SDK v3, the default major, over TEST_WORKERS workers.
# - test-v2: under SDK v2, the tests marked `sdk`: those that can depend on the SDK major
#   (tests/sdk_split.py marks what reaches the SDK: tests/sdk*, the examples, imports of
#   sagemaker or sagemaker_plans_local.sdk, .activate(), the sagemaker_session fixture).
#   The rest answer the same without any SDK, so this is not skipping: every test runs under
#   every major it can differ on. `make test-v2-all` runs the whole suite under v2 as well.
# The v2 part (~85 tests, mostly waiting on job processes) on one worker ends about when the
# v3 part on two does: on 2 cores, more workers only share the same CPU.
TEST_WORKERS ?= 2
TEST_WORKERS_V2 ?= 1
PYTEST_XDIST = --dist worksteal

test: $(STAMP) $(STAMP3) $(MPI_STAMP) $(MPI_STAMP3)
	$(MAKE) --no-print-directory -j2 --output-sync=target test-v3 test-v2

test-v3: $(STAMP3) $(MPI_STAMP3) $(AWSCLI_STAMP) $(NODE_SDK_STAMP)
	$(PY3) -m pytest -q -n $(TEST_WORKERS) $(PYTEST_XDIST)

test-v2: $(STAMP) $(MPI_STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS_V2) $(PYTEST_XDIST) -m sdk

test-v2-all: $(STAMP) $(MPI_STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) $(PYTEST_XDIST)

bench: $(STAMP) $(STAMP3) $(MPI_STAMP3)
	$(PY) benchmarks/run.py --skip-train --skip-server --skip-durable --skip-s3-bodies --skip-engine --skip-accounts
	$(PY3) benchmarks/run.py --skip-throughput --skip-pools --skip-search --skip-fit --skip-lists --skip-capacity --skip-startup --skip-multinode --skip-simulate

clean:
	rm -rf $(VENV) $(VENV3) $(AWSCLI_VENV) $(NODE_SDK) $(DEMO_HOME) build *.egg-info
