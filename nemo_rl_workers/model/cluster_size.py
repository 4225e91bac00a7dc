"""The policy's world size from a config's `cluster:` section, as NeMo-RL computes it.

Upstream's GRPO setup builds the cluster as `[cluster.gpus_per_node] * cluster.num_nodes`
bundles. The policy trains on all of them when generation is colocated (the default).
With `policy.generation.colocated.enabled: false`, generation gets its own share:
on one node, `colocated.resources.gpus_per_node` GPUs are taken from that node; on
several nodes, `colocated.resources.num_nodes` whole nodes are. `check` uses this when
no `--world-size` / `--nodes` flag is given; the flags override it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nemo_rl_workers.errors import Problem, show
from nemo_rl_workers.model.preflight import MISSING, lookup
from nemo_rl_workers.model.sections import as_mapping


@dataclass(frozen=True)
class ClusterSize:
    """The policy's world size, how it was computed, and why it could not be."""

    world_size: int | None
    how: str | None  # e.g. "cluster.gpus_per_node (2) x cluster.num_nodes (1) = 2"
    problems: tuple[Problem, ...] = ()


def _count(config: Mapping[str, Any], path: str) -> tuple[int | None, list[Problem]]:
    value = lookup(config, path)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value, []
    given = "absent" if value is MISSING else show(value)
    return None, [Problem(path, "a positive integer", given,
                          f"{path} must be a positive integer, but is {given}.",
                          rule="cluster")]


def policy_world_size(config: Mapping[str, Any]) -> ClusterSize:
    """The world size NeMo-RL gives the policy, from `cluster:`; None without that section."""
    if as_mapping(config.get("cluster")) is None:
        return ClusterSize(None, None)
    gpus, problems = _count(config, "cluster.gpus_per_node")
    nodes, more = _count(config, "cluster.num_nodes")
    problems += more
    if gpus is None or nodes is None:
        return ClusterSize(None, None, tuple(problems))
    how = f"cluster.gpus_per_node ({gpus}) x cluster.num_nodes ({nodes})"
    if lookup(config, "policy.generation.colocated.enabled") is not False:
        return ClusterSize(gpus * nodes, f"{how} = {gpus * nodes}")
    # Non-colocated generation takes GPUs (one node) or whole nodes (several) away.
    resources = "policy.generation.colocated.resources"
    if nodes == 1:
        taken, problems = _count(config, f"{resources}.gpus_per_node")
        if taken is not None and taken < gpus:
            left = gpus - taken
            return ClusterSize(left, f"({how.split(' x ')[0]} - {resources}.gpus_per_node "
                                     f"({taken})) x cluster.num_nodes (1) = {left}")
    else:
        taken, problems = _count(config, f"{resources}.num_nodes")
        if taken is not None and taken < nodes:
            left = nodes - taken
            return ClusterSize(gpus * left, f"cluster.gpus_per_node ({gpus}) x (cluster.num_nodes "
                                            f"({nodes}) - {resources}.num_nodes ({taken})) = "
                                            f"{gpus * left}")
    if problems:
        return ClusterSize(None, None, tuple(problems))
    what = "gpus_per_node" if nodes == 1 else "num_nodes"
    total = gpus if nodes == 1 else nodes
    path = f"{resources}.{what}"
    return ClusterSize(None, None, (Problem(
        path, f"less than {total}", str(taken),
        f"{path} is {taken}, which leaves no {'GPU' if nodes == 1 else 'node'} of the cluster "
        f"for training; make it less than {total} or colocate generation.",
        rule="cluster"),))
