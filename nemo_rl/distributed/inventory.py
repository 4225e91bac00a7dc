"""What exists in the connected Ray cluster: counted before and after an operation.

A refused config must leave these counts unchanged; the demo, the tests and the
benchmarks all compare them. Counted without the dashboard.
"""

from __future__ import annotations

from typing import Any


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
