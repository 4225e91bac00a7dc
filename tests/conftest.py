"""Suite-wide fixtures: ONE local Ray cluster for the whole session.

The cluster starts on first use by a test that asks for `ray_cluster` (mark those tests
`ray`), with 2 CPUs and no dashboard, and is always shut down at the end of the session.
Tests count what exists with `nemo_rl.distributed.inventory`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The tool keeps tree models in the user's cache folder by default: the suite keeps its
# own, one per session (the commands it runs in subprocesses inherit it), so a run neither
# reads answers an earlier run left in ~/.cache nor leaves any there.
if "NEMO_RL_WORKERS_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="nemo-rl-workers-tests-cache-")
    os.environ["NEMO_RL_WORKERS_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)

# tests/cluster starts its own multi-node Ray cluster, which cannot share a process with the
# session cluster below: `make test-cluster` runs it alone, with this variable set.
CLUSTER_TESTS_ENV = "NEMO_RL_CLUSTER_TESTS"
collect_ignore = [] if os.environ.get(CLUSTER_TESTS_ENV) == "1" else ["cluster"]


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
