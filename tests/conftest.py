"""Suite-wide fixtures: ONE local Ray cluster for the whole session, and resource counters.

The cluster starts on first use by a test that asks for `ray_cluster` (mark those tests
`ray`), with 2 CPUs and no dashboard, and is always shut down at the end of the session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def named_actor_count() -> int:
    """Live named actors in every namespace of the connected cluster."""
    import ray

    actors: list[Any] = ray.util.list_named_actors(all_namespaces=True)
    return len(actors)


def live_placement_group_count() -> int:
    """Placement groups of the connected cluster that are not removed."""
    import ray

    table: dict[str, Any] = ray.util.placement_group_table()
    return sum(1 for info in table.values() if info.get("state") != "REMOVED")


def ray_resources_snapshot() -> tuple[int, int]:
    """(named actors, live placement groups): compare before and after an operation."""
    return named_actor_count(), live_placement_group_count()
