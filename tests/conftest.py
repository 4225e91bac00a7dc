"""Suite-wide fixtures: ONE local Ray cluster for the whole session; the in-process CLI
(`cli`) and the shared corpus of NeMo-RL trees (`corpus`).

The cluster starts on first use by a test that asks for `ray_cluster` (mark those tests
`ray`), with 2 CPUs and no dashboard, and is always shut down at the end of the session.
Tests count what exists with `nemo_rl.distributed.inventory`.
"""

from __future__ import annotations

import ast
import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.cli_run import Ran

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The tool keeps tree models in the user's cache folder by default: the suite keeps its
# own, one per session (the commands it runs in subprocesses inherit it), so a run neither
# reads answers an earlier run left in ~/.cache nor leaves any there.
if "NEMO_RL_WORKERS_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="nemo-rl-workers-tests-cache-")
    os.environ["NEMO_RL_WORKERS_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)

# The interpreter raises on a syntax shape it has no case for, rather than calling what
# it holds undecided (`nemo_rl_workers.interpret.strict`): the corpus and every tree a test
# writes are walked in strict mode, here and in the commands run in subprocesses.
os.environ.setdefault("NEMO_RL_WORKERS_STRICT", "1")

# tests/cluster starts its own multi-node Ray cluster, which cannot share a process with the
# session cluster below: `make test-cluster` runs it alone, with this variable set.
CLUSTER_TESTS_ENV = "NEMO_RL_CLUSTER_TESTS"
collect_ignore = [] if os.environ.get(CLUSTER_TESTS_ENV) == "1" else ["cluster"]

# `make test-py313` runs the suite where only the tool is installed, as in a NeMo-RL CI image
# (no torch, no reference runtime, no research template): it leaves out each test module
# that imports one of those at its top level.
TOOL_ONLY_ENV = "NEMO_RL_WORKERS_TOOL_ONLY"
NOT_IN_TOOL_ONLY = {"nemo_rl", "template_project", "torch", "modelopt", "transformers"}


def _imports_outside_the_tool(path: str, seen: set[str] | None = None) -> bool:
    """Whether the module at `path`, or a test module it imports (`tests.ray.fault_workers`),
    imports the runtime, the template or torch at its top level."""
    seen = set() if seen is None else seen
    if path in seen:
        return False
    seen.add(path)
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return False  # let pytest report it
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] in NOT_IN_TOOL_ONLY:
                return True
            if name.startswith("tests."):
                module = os.path.join(REPO_ROOT, *name.split(".")) + ".py"
                if os.path.isfile(module) and _imports_outside_the_tool(module, seen):
                    return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(TOOL_ONLY_ENV) != "1":
        return
    skip = pytest.mark.skip(reason="runs the reference runtime or the research template "
                                   "(torch), which only `make test` installs")
    for item in items:
        if item.get_closest_marker("runtime") is not None:
            item.add_marker(skip)


def pytest_ignore_collect(collection_path: object, config: pytest.Config) -> bool | None:
    path = str(collection_path)
    if os.environ.get(TOOL_ONLY_ENV) == "1" and path.endswith(".py"):
        return True if _imports_outside_the_tool(path) else None
    return None


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A local Ray cluster (2 CPUs) shared by every test of the session."""
    import ray

    started = False
    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            # Actors import test-only worker modules (tests.*) from the repository root.
            runtime_env={"env_vars": {"PYTHONPATH": REPO_ROOT}},
        )
        started = True
    try:
        yield
    finally:
        if started:
            ray.shutdown()


@pytest.fixture()
def cli() -> Callable[..., Ran]:
    """`cli("check", path)`: `nemo-rl-workers` run in this process (tests/cli_run.py), its
    exit code and output."""
    from tests.cli_run import run_cli

    return run_cli


@pytest.fixture()
def corpus() -> Callable[..., Path]:
    """`corpus()` is the 2026-08 NeMo-RL tree, `corpus("nemo-rl-2025-09")` (or
    `corpus("2025-09")`) the older one; the test skips where it is absent (tests/corpus.py)."""
    from tests.corpus import corpus_tree

    return corpus_tree
