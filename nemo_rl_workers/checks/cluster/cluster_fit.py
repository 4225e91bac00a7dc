"""Can a cluster ever hold a virtual cluster's bundles? A pure verdict over node resources.

Each node group is one STRICT_PACK placement group, so all of its bundles must fit on one
node: a group whose summed bundles exceed every live node's total resources can never be
placed, however long one waits. The same function judges the live cluster (`ray.nodes()`,
before anything is reserved) and a description of one (`check --cluster-resources FILE`),
so both give the same verdict. Node resources are totals, not what is free now: busy
resources make a start wait, never refuse it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Sums of fractional bundles (0.01 CPU each) are compared with this slack.
EPSILON = 1e-9
# What a description may hold: more nodes than any real cluster has is a mistake.
MAX_NODES = 100_000
MAX_RESOURCE = 1e15


@dataclass(frozen=True)
class NodeGroupNeed:
    """Node group `index`: `bundles` bundles of `bundle`, all on one node."""

    index: int
    bundles: int
    bundle: Mapping[str, float]

    @property
    def total(self) -> dict[str, float]:
        return {k: v * self.bundles for k, v in self.bundle.items()}

    def describe(self) -> str:
        per = ", ".join(f"{k}: {_num(v)}" for k, v in self.bundle.items())
        return (f"node group {self.index} needs {self.bundles} bundle"
                f"{'s' if self.bundles != 1 else ''} x {{{per}}} = {_amounts(self.total)} "
                "on one node")


def _num(value: float) -> str:
    return f"{value:.6g}"


def _amounts(resources: Mapping[str, float]) -> str:
    return ", ".join(f"{_num(v)} {k}" for k, v in resources.items())


def node_groups(bundle_counts: Sequence[int], bundle: Mapping[str, float]) -> list[NodeGroupNeed]:
    return [NodeGroupNeed(i, n, dict(bundle)) for i, n in enumerate(bundle_counts)]


def _holds(node: Mapping[str, float], need: Mapping[str, float]) -> bool:
    return all(node.get(k, 0.0) + EPSILON >= v for k, v in need.items())


def _closeness(node: Mapping[str, float], need: Mapping[str, float]) -> float:
    """How much of `need` the node covers at worst (1 or more: it holds it)."""
    return min((node.get(k, 0.0) / v for k, v in need.items() if v > 0), default=1.0)


def fit_problems(
    groups: Sequence[NodeGroupNeed], nodes: Sequence[Mapping[str, float]]
) -> list[str]:
    """One line per reason the cluster of `nodes` can never hold `groups`; [] if it can."""
    if not nodes:
        return ["the cluster has no live node"]
    problems: list[str] = []
    for group in groups:
        need = group.total
        if any(_holds(node, need) for node in nodes):
            continue
        largest = max(nodes, key=lambda node: _closeness(node, need))
        has = {k: float(largest.get(k, 0.0)) for k in need}
        problems.append(f"{group.describe()}; the largest live node has {_amounts(has)}")
    if problems:
        return problems
    # Every group fits some node alone; together they must not exceed the whole cluster.
    keys = dict.fromkeys(k for g in groups for k in g.bundle)
    wanted = {k: sum(g.total.get(k, 0.0) for g in groups) for k in keys}
    have = {k: sum(float(n.get(k, 0.0)) for n in nodes) for k in keys}
    short = [k for k in keys if have[k] + EPSILON < wanted[k]]
    if short:
        problems.append(
            f"the {len(groups)} node groups need {_amounts({k: wanted[k] for k in short})} in "
            f"all; the {len(nodes)} live node{'s have' if len(nodes) != 1 else ' has'} "
            f"{_amounts({k: have[k] for k in short})} in all"
        )
    return problems


def live_node_resources(ray_nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, float]]:
    """The total resources of each live node, from `ray.nodes()`'s entries."""
    found: list[dict[str, float]] = []
    for node in ray_nodes:
        if not node.get("Alive"):
            continue
        resources = node.get("Resources") or {}
        found.append({str(k): float(v) for k, v in resources.items()
                      if isinstance(v, int | float) and not isinstance(v, bool)})
    return found


class ClusterDescriptionError(ValueError):
    """A description of a cluster's nodes that cannot be used; the message is one line."""


def parse_cluster_resources(text: str) -> list[dict[str, float]]:
    """Node resources from JSON: a list of `{resource: amount}` objects, or `{"nodes": [...]}`;
    an entry may also be a `ray.nodes()` entry (`{"Alive": true, "Resources": {...}}`), so
    `json.dumps(ray.nodes())` can be given as is."""
    try:
        data: object = json.loads(text)
    except RecursionError:
        raise ClusterDescriptionError("the JSON nests too deeply") from None
    except ValueError as err:  # JSONDecodeError, and integers past Python's digit limit
        raise ClusterDescriptionError(f"not valid JSON: {err}") from None
    if isinstance(data, dict) and "nodes" in data:
        data = data["nodes"]
    if not isinstance(data, list):
        raise ClusterDescriptionError(
            'expected a JSON list of nodes (or {"nodes": [...]}), each {"CPU": 4, "GPU": 8, ...}'
        )
    if len(data) > MAX_NODES:
        raise ClusterDescriptionError(f"{len(data)} nodes; at most {MAX_NODES} are read")
    nodes: list[dict[str, float]] = []
    for i, entry in enumerate(data):
        if isinstance(entry, dict) and "Resources" in entry:
            if entry.get("Alive") is False:
                continue
            entry = entry["Resources"]
        if not isinstance(entry, dict):
            raise ClusterDescriptionError(
                f"node {i} is {type(entry).__name__}, not an object of resource amounts")
        node: dict[str, float] = {}
        for key, value in entry.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ClusterDescriptionError(
                    f"node {i} resource {key!r} is {type(value).__name__}, not a number")
            try:
                amount = float(value)
            except OverflowError:  # an integer too large for a float
                amount = math.inf
            if not math.isfinite(amount) or not 0 <= amount <= MAX_RESOURCE:
                raise ClusterDescriptionError(
                    f"node {i} resource {key!r} must be a number from 0 to {MAX_RESOURCE:g}")
            node[str(key)] = amount
        nodes.append(node)
    return nodes
