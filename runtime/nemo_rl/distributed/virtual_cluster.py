"""A virtual cluster: bundles of resources per node, reserved as Ray placement groups.

Placement groups are created lazily, when the first worker group asks for them, so a
config rejected before allocation never reserves anything. CPU mode (`use_gpus=False`)
gives each bundle a small fractional CPU, so a 2-CPU machine can host several workers.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

import ray
from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from nemo_rl_workers.checks.cluster.cluster_fit import (
    NodeGroupNeed,
    fit_problems,
    live_node_resources,
    node_groups,
)

logger = logging.getLogger(__name__)

# A bundle may not be empty; a sliver of CPU keeps many bundles on a 2-CPU machine.
CPU_MODE_CPUS_PER_BUNDLE = 0.01
GPU_MODE_CPUS_PER_BUNDLE = 1.0
# While placement groups are pending, a progress line this often.
PROGRESS_INTERVAL_S = 10.0


def init_ray(num_cpus: int | None = None, *, log_to_driver: bool = True) -> None:
    """Connect to the cluster at RAY_ADDRESS, or start a local one (idempotent)."""
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=log_to_driver)
        logger.info("connected to the Ray cluster at %s", address)
        return
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=log_to_driver)
    logger.info("started a local Ray cluster (num_cpus=%s)", num_cpus)


def free_port() -> int:
    """A TCP port free on this node now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        port: int = sock.getsockname()[1]
        return port


def _node_ip_and_free_port() -> tuple[str, int]:
    ip = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]  # unannotated in ray
    return str(ip), free_port()


def rendezvous_address(slots: list[tuple[PlacementGroup, int]]) -> tuple[str, int]:
    """(address, port) where rank 0 of a group placed on `slots` can host the
    torch.distributed store: loopback when every rank shares rank 0's node, else that
    node's IP. The port is picked on rank 0's node: here when it is the driver's node,
    else by a zero-CPU task in rank 0's bundle."""
    nodes = [bundle_node_id(pg, bundle) for pg, bundle in slots]
    single_node = all(node == nodes[0] for node in nodes)
    if single_node and nodes[0] == ray.get_runtime_context().get_node_id():
        return "127.0.0.1", free_port()
    pg, bundle = slots[0]
    strategy = PlacementGroupSchedulingStrategy(
        placement_group=pg, placement_group_bundle_index=bundle
    )
    task = ray.remote(_node_ip_and_free_port).options(num_cpus=0, scheduling_strategy=strategy)
    ip, port = ray.get(task.remote())
    return ("127.0.0.1" if single_node else ip), port


def _available() -> str:
    """The cluster's free CPU/GPU now, as a short text."""
    free: dict[str, float] = ray.available_resources()  # type: ignore[no-untyped-call]  # ray: unannotated
    return ", ".join(f"{free.get(k, 0.0):.6g} {k}" for k in ("CPU", "GPU"))


def bundle_node_id(pg: PlacementGroup, bundle: int) -> str:
    """The node ID a ready placement group put `bundle` on."""
    table: dict[str, Any] = ray.util.placement_group_table(pg)
    node: str = table["bundles_to_node_id"][bundle]
    return node


class ClusterAllocationError(RuntimeError):
    """The cluster cannot ever hold the requested bundles (refused before anything is
    reserved), or could not reserve them in time; `problems` has one line per reason."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class RayVirtualCluster:
    """One placement group per node, each holding that node's bundles."""

    def __init__(
        self,
        bundle_ct_per_node_list: list[int],
        *,
        use_gpus: bool = True,
        num_gpus_per_node: int = 8,
        name: str = "",
        cpus_per_bundle: float | None = None,
        ready_timeout_s: float = 60.0,
        may_add_nodes: bool = False,
        progress_interval_s: float = PROGRESS_INTERVAL_S,
    ) -> None:
        if not bundle_ct_per_node_list or any(n < 1 for n in bundle_ct_per_node_list):
            raise ValueError(
                f"bundle_ct_per_node_list must list at least one node with at least one bundle "
                f"each, but is {bundle_ct_per_node_list!r}."
            )
        if use_gpus and any(n > num_gpus_per_node for n in bundle_ct_per_node_list):
            raise ValueError(
                f"bundle_ct_per_node_list={bundle_ct_per_node_list!r} asks for more GPU bundles "
                f"on a node than num_gpus_per_node={num_gpus_per_node}."
            )
        self.bundle_ct_per_node_list = list(bundle_ct_per_node_list)
        self.use_gpus = use_gpus
        self.num_gpus_per_node = num_gpus_per_node
        self.name = name
        default_cpus = GPU_MODE_CPUS_PER_BUNDLE if use_gpus else CPU_MODE_CPUS_PER_BUNDLE
        self.cpus_per_bundle = default_cpus if cpus_per_bundle is None else cpus_per_bundle
        self.ready_timeout_s = ready_timeout_s
        # An autoscaler may add nodes: a shape no live node holds waits instead of refusing.
        self.may_add_nodes = may_add_nodes
        self.progress_interval_s = progress_interval_s
        self._placement_groups: list[PlacementGroup] = []
        # Worker groups currently placed on this cluster; the last one out frees the groups.
        self._users: set[str] = set()

    def world_size(self) -> int:
        return sum(self.bundle_ct_per_node_list)

    def bundle_resources(self) -> dict[str, float]:
        bundle: dict[str, float] = {"CPU": self.cpus_per_bundle}
        if self.use_gpus:
            bundle["GPU"] = 1.0
        return bundle

    def actor_resources(self) -> dict[str, Any]:
        """Ray options that make one actor fit exactly one bundle."""
        return {"num_cpus": self.cpus_per_bundle, "num_gpus": 1 if self.use_gpus else 0}

    @property
    def placement_groups_created(self) -> bool:
        return bool(self._placement_groups)

    def node_groups(self) -> list[NodeGroupNeed]:
        """Each node's placement group as a need: its bundles, all on one node."""
        return node_groups(self.bundle_ct_per_node_list, self.bundle_resources())

    def check_fit(self) -> None:
        """Refuse at once, before anything is reserved, a shape no live node can ever hold
        (unless `may_add_nodes`: then it is only logged, and the start waits)."""
        nodes = live_node_resources(ray.nodes())  # type: ignore[no-untyped-call]  # ray: unannotated
        problems = tuple(fit_problems(self.node_groups(), nodes))
        if not problems:
            return
        name = self.name or "(unnamed)"
        if self.may_add_nodes:
            for problem in problems:
                logger.warning("cluster %s: %s; waiting for the autoscaler to add a node",
                               name, problem)
            return
        raise ClusterAllocationError(
            "\n".join(f"cluster {name} can never be placed: {p}" for p in problems), problems
        )

    # --- several nodes ---------------------------------------------------------------

    def verification_node(self) -> str | None:
        """A node where this cluster's bundles can run, for verifying a worker class in its
        own environment before anything is reserved (the environment may exist only on
        the worker nodes). None on a one-node cluster: there is no choice to make."""
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]  # ray: unannotated
        if len(alive) <= 1:
            return None
        fits = self.candidate_nodes()
        return fits[0] if fits else None

    def candidate_nodes(self) -> list[str]:
        """The live nodes with room for one of this cluster's bundles, the likeliest first:
        where its actors may run (so where their environment must work)."""
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]  # ray: unannotated
        need = self.bundle_resources()
        fits = [
            n for n in alive
            if all(n.get("Resources", {}).get(k, 0.0) >= v for k, v in need.items())
        ]
        # Bundles pack onto the nodes with the most of the scarce resource first.
        key = "GPU" if self.use_gpus else "CPU"
        fits.sort(key=lambda n: -float(n.get("Resources", {}).get(key, 0.0)))
        return [str(n["NodeID"]) for n in fits]

    def bundle_locations(self) -> list[tuple[PlacementGroup, int]]:
        """(placement group, bundle index) of every bundle, node by node; creates the groups."""
        groups = self._init_placement_groups()
        counts = self.bundle_ct_per_node_list
        return [(pg, i) for pg, n in zip(groups, counts, strict=True) for i in range(n)]

    def _init_placement_groups(self) -> list[PlacementGroup]:
        """Reserve one STRICT_PACK placement group per node (once)."""
        if self._placement_groups:
            return self._placement_groups
        self.check_fit()
        created: list[PlacementGroup] = []
        try:
            for node, count in enumerate(self.bundle_ct_per_node_list):
                pg_name = f"{self.name}-node{node}" if self.name else ""
                created.append(
                    placement_group(
                        [self.bundle_resources() for _ in range(count)],
                        strategy="STRICT_PACK",
                        name=pg_name,
                    )
                )
            self._wait_ready(created)
        except BaseException:
            for pg in created:
                remove_placement_group(pg)
            raise
        self._placement_groups = created
        return created

    def _wait_ready(self, created: list[PlacementGroup]) -> None:
        """Wait for every placement group, a progress line each `progress_interval_s`
        naming what is pending; at `ready_timeout_s`, say what was still missing."""
        name = self.name or "(unnamed)"
        needs = self.node_groups()
        pending = {pg.ready(): i for i, pg in enumerate(created)}
        start = time.monotonic()
        while pending:
            waited = time.monotonic() - start
            left = self.ready_timeout_s - waited
            if left <= 0:
                missing = "; ".join(needs[i].describe() for i in sorted(pending.values()))
                raise ClusterAllocationError(
                    f"cluster {name}: {len(pending)} of {len(created)} placement group(s) not "
                    f"ready after {self.ready_timeout_s:g} s; still missing: {missing}; "
                    f"available now: {_available()}",
                    tuple(needs[i].describe() for i in sorted(pending.values())),
                )
            ready, _ = ray.wait(list(pending), num_returns=len(pending),
                                timeout=min(left, self.progress_interval_s))
            for ref in ready:
                pending.pop(ref)
            if pending and time.monotonic() - start < self.ready_timeout_s:
                what = "; ".join(needs[i].describe() for i in sorted(pending.values()))
                logger.warning("cluster %s: waiting %.0f s so far (of %g s) for %d placement "
                               "group(s): %s; available now: %s", name,
                               time.monotonic() - start, self.ready_timeout_s, len(pending),
                               what, _available())

    def acquire(self, user: str) -> list[tuple[PlacementGroup, int]]:
        """Bundles for a worker group named `user`, creating the placement groups if needed."""
        locations = self.bundle_locations()
        self._users.add(user)
        return locations

    def release(self, user: str) -> None:
        """A worker group is done; remove the placement groups once nobody uses them."""
        self._users.discard(user)
        if not self._users:
            self._remove_placement_groups()

    def _remove_placement_groups(self) -> None:
        for pg in self._placement_groups:
            try:
                remove_placement_group(pg)
            except Exception as err:  # already gone with a dead cluster; nothing to free
                logger.debug("removing placement group %s failed: %s", pg.id, err)
        self._placement_groups = []

    def shutdown(self) -> None:
        """Remove every placement group of this cluster."""
        self._users.clear()
        self._remove_placement_groups()
