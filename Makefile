# One entry point for people and CI. Everything runs from the project's .venv.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup run test test-cluster test-py313 test-floor pytest typecheck lint bench clean

setup: $(STAMP)

# torch==2.13.0 first: pip takes the CPU build that lies on disk here; anything newer
# would pull several GB of CUDA wheels.
# Three distributions, each editable:
# - the tool (`.`: `nemo_rl_workers` and `contracts`, what users install);
# - the reference runtime (`runtime/`: the package `nemo_rl`, upstream's module paths, which
#   `make run` trains with and the tests exercise; never part of the tool's wheel, so the
#   tool installs beside a user's NeMo-RL without shadowing it);
# - the research template, whose entry point registers its worker.
# Editable installs in compat mode put the source folders on sys.path (a .pth line)
# instead of an import hook, so mypy and pyrefly run in another folder find
# `contracts`, `nemo_rl_workers`, `nemo_rl` and `template_project` (setuptools calls the
# mode transitional).
EDITABLE := --config-settings editable_mode=compat
# The distribution declares ranges (what a NeMo-RL environment holds must fit); this
# repository's CI installs the exact versions it is tested with.
PINS := -c constraints/ci.txt
$(STAMP): pyproject.toml runtime/pyproject.toml research/template_project/pyproject.toml Makefile constraints/ci.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q $(PINS) -e '.[runtime,dev]' $(EDITABLE)
	$(PY) -m pip install -q --no-deps -e runtime $(EDITABLE)
	$(PY) -m pip install -q --no-deps -e research/template_project $(EDITABLE)
	$(PY) -m pip install -q ./stubs && rm -rf stubs/build stubs/*.egg-info
	touch $(STAMP)

run: setup
	$(PY) -m nemo_rl.demo

test: lint typecheck pytest

typecheck: setup
	$(VENV)/bin/mypy
	$(VENV)/bin/pyrefly check

# pytest exits 5 when it collected no test: that is a broken suite, not a pass.
pytest: setup
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest ran no test; failing" >&2; exit 1; fi; \
	exit $$rc

# A real 3-node Ray cluster on this machine (ray.cluster_utils.Cluster), in its own pytest
# process: it cannot share one with the suite's session cluster. Over 90 s, so not in `test`.
# Also upstream's own worker-group tests, unguarded and guarded (two 2-CPU Ray clusters of
# their own, in subprocesses; about 6 minutes).
test-cluster: setup
	@mkdir -p /tmp/ray-cluster-tests
	@RAY_TMPDIR=$${RAY_TMPDIR:-/tmp/ray-cluster-tests} NEMO_RL_CLUSTER_TESTS=1 \
	$(PY) -m pytest tests/cluster $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test-cluster: pytest ran no test; failing" >&2; exit 1; fi; \
	exit $$rc

# The tool where NeMo-RL users install it: Python 3.13 (a Debian 13 root made by the shared
# tools' py313, about 70 s once) with the versions NeMo-RL's uv.lock holds
# (constraints/nemo-rl-lock.txt), running every test that needs only the tool (no torch, no
# reference runtime: tests/conftest.py leaves out the modules importing them).
# The folders run there: those whose every test has been seen to pass on 3.13 with the lock's
# versions (the CLI's own folders, docs, hardening and newcomer are next: see the README).
TOOL_ONLY_TESTS ?= tests/audit tests/audit_ext tests/config tests/source tests/tree \
	tests/reach tests/revision tests/migrate tests/guard tests/user_extension \
	tests/pytest_plugin tests/formats tests/contracts tests/static_cache tests/static_check \
	tests/launches tests/recall tests/driver_entry
PY313 ?= ../shared/tools/py313
test-py313:
	@[ -x $(PY313) ] || { echo "make test-py313: needs $(PY313) (the shared tools)" >&2; exit 1; }
	$(PY313) run bash .ci/test-py313.sh -q $(TOOL_ONLY_TESTS) $(PYTEST_ARGS)

# The same tests with every requirement at its declared floor (constraints/floors.py), on
# this machine's Python.
test-floor:
	bash .ci/test-floor.sh -q $(TOOL_ONLY_TESTS) $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .

bench: setup
	$(PY) -m bench

clean:
	rm -rf $(VENV) .venv313 .venv-floor .mypy_cache .pytest_cache .ruff_cache
