"""`check --cluster-resources FILE` / `--address ADDR`: can that cluster ever hold the config?

The config's `cluster:` section (or `--nodes` / `--gpus-per-node`) gives the shape NeMo-RL
reserves: `num_nodes` node groups of `gpus_per_node` GPU bundles, each group packed on one
node. It is judged by the same pure verdict `RayVirtualCluster` applies before reserving
anything (`nemo_rl_workers.checks.cluster.cluster_fit`), over the nodes a JSON file describes or the
live nodes of the cluster at an address, so CI and a real start agree.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nemo_rl_workers.checks.cluster.cluster_fit import (
    ClusterDescriptionError,
    fit_problems,
    live_node_resources,
    node_groups,
    parse_cluster_resources,
)
from nemo_rl_workers.errors import Problem, one_line
from nemo_rl_workers.model.preflight import MISSING, lookup

# The bundle RayVirtualCluster(use_gpus=True) reserves per GPU (GPU_MODE_CPUS_PER_BUNDLE).
GPU_BUNDLE: Mapping[str, float] = {"CPU": 1.0, "GPU": 1.0}
CONNECT_TIMEOUT_S = 30.0


class ClusterUnusable(Exception):
    """The cluster description or address cannot be used; one line, exit 2."""


def nodes_from_file(path: str) -> list[dict[str, float]]:
    from nemo_rl_workers.reading.safe_read import ConfigLoadError, decode, read_bytes

    try:
        text = decode(read_bytes(Path(path), path), path)
        return parse_cluster_resources(text)
    except ConfigLoadError as err:
        raise ClusterUnusable(f"--cluster-resources {err}") from None
    except ClusterDescriptionError as err:
        raise ClusterUnusable(f"--cluster-resources {one_line(path)}: {err}") from None


def nodes_at_address(address: str) -> list[dict[str, float]]:
    """The live nodes' resources of the Ray cluster at `address` (connects as a driver)."""
    import ray

    found: list[dict[str, float]] = []
    failure: list[str] = []

    def connect() -> None:
        try:
            if not ray.is_initialized():
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            nodes: list[Any] = ray.nodes()  # type: ignore[no-untyped-call]  # ray: unannotated
            found.extend(live_node_resources(nodes))
        except Exception as err:  # noqa: BLE001 - any failure to connect is one line
            failure.append(f"{type(err).__name__}: {str(err).strip().splitlines()[:1]}")

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(CONNECT_TIMEOUT_S)
    if thread.is_alive():
        raise ClusterUnusable(
            f"--address {one_line(address)}: no Ray cluster answered within "
            f"{CONNECT_TIMEOUT_S:g} s")
    if failure:
        raise ClusterUnusable(f"--address {one_line(address)}: cannot connect: "
                              f"{one_line(failure[0])}")
    return found


def _count(config: Mapping[str, Any], path: str, flag: int | None) -> int | None:
    if flag is not None:
        return flag
    value = lookup(config, path)
    if value is MISSING or isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None  # a wrong value is the cluster rule's problem, reported already
    return value


def fit_findings(
    config: Mapping[str, Any],
    nodes: list[dict[str, float]],
    *,
    num_nodes: int | None,
    gpus_per_node: int | None,
    described_as: str,
) -> tuple[list[Problem], str | None]:
    """(problems, or a note saying why the fit was not judged) for one config."""
    count = _count(config, "cluster.num_nodes", num_nodes)
    per_node = _count(config, "cluster.gpus_per_node", gpus_per_node)
    if count is None or per_node is None:
        return [], ("cluster fit: not checked, the config has no cluster.num_nodes and "
                    "cluster.gpus_per_node (or give --nodes and --gpus-per-node)")
    groups = node_groups([per_node] * count, GPU_BUNDLE)
    given = f"{count} node(s) x {per_node} GPU bundle(s)"
    return [
        Problem("cluster", f"a shape {described_as} can hold", given,
                f"cluster: {problem} ({described_as})", rule="cluster.fit")
        for problem in fit_problems(groups, nodes)
    ], None
