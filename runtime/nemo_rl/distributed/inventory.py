"""What the connected Ray cluster holds, and what it has ever held, read from Ray's own state.

Two measures, both without the dashboard:
- the *live* counts (named actors, placement groups not removed): what a teardown frees;
- the *record* (`ray_record`): every actor and placement group the cluster's control store
  (GCS) has recorded, dead actors and removed placement groups included. Comparing records
  before and after an operation tells whether it created anything at all, even when it tore
  everything down again before returning.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class RayRecord:
    """Every actor and placement group Ray has recorded, by ID, with a short description
    (`WorkerHost 'policy-0' DEAD`, `'cluster-node0' REMOVED`)."""

    actors: dict[str, str]
    placement_groups: dict[str, str]

    def since(self, before: RayRecord) -> RayRecord:
        """What was created after `before` was taken (whatever its state now)."""
        return RayRecord(
            {k: v for k, v in self.actors.items() if k not in before.actors},
            {k: v for k, v in self.placement_groups.items() if k not in before.placement_groups},
        )

    @property
    def empty(self) -> bool:
        return not self.actors and not self.placement_groups

    def describe(self) -> str:
        """One line: how many of each, and what they are."""
        parts = [f"{len(self.actors)} actor(s)", f"{len(self.placement_groups)} placement group(s)"]
        listed = sorted(self.actors.values()) + sorted(self.placement_groups.values())
        return ", ".join(parts) + (f": {'; '.join(listed)}" if listed else "")


def ray_record() -> RayRecord:
    """Every actor (alive or dead) and placement group (live or removed) in Ray's GCS."""
    import ray

    # `ray.util.state.list_actors` needs the dashboard; the GCS actor table does not, and
    # keeps dead actors (ray 2.60: `ray._private.state.actors`, the table `ray.timeline`
    # and `ray.nodes` are built on).
    from ray._private import state

    actors: dict[str, Any] = state.actors()
    groups: dict[str, Any] = ray.util.placement_group_table()
    return RayRecord(
        {
            actor_id: f"{info.get('ActorClassName', '?')} {info.get('Name') or '(unnamed)'!r} "
                      f"{info.get('State', '?')}"
            for actor_id, info in actors.items()
        },
        {
            group_id: f"{info.get('name') or '(unnamed)'!r} {info.get('state', '?')}"
            for group_id, info in groups.items()
        },
    )
