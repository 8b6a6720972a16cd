# Two commands set everything up on a fresh machine: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' 'sagemaker>=2.257,<3'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) examples/warm_pools.py
	$(PY) examples/training_plan.py
	SAGEMAKER_SUPPRESS_V2_WARNING=1 $(PY) examples/seed_warm_pool_estimator.py
	SAGEMAKER_SUPPRESS_V2_WARNING=1 $(PY) examples/training_plan_estimator.py

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
