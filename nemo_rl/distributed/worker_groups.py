"""Worker groups: named Ray actors hosting one verified worker class, one per bundle.

The order is fixed: verify the class in its environment (once per class, cached), then
reserve placement groups, then create actors `<name_prefix>-<rank>`, then wait until each
answers `is_alive`. If anything fails after the first reservation, everything this group
created is torn down before the error is raised, so a failed start leaves no actor and no
placement group behind.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import pickle
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayError
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from contracts.calltime import call_contracts_enabled, enforce_calls
from contracts.init_call import InitCall
from contracts.protocols import PROTOCOLS
from nemo_rl.distributed.rendezvous import TIMEOUT_ENV, rendezvous_env
from nemo_rl.distributed.verification import verify_check
from nemo_rl.distributed.virtual_cluster import (
    RayVirtualCluster,
    bundle_node_id,
    rendezvous_address,
)
from nemo_rl.workers.contract_check import WorkerCheck, import_class, plain
from nemo_rl.workers.registry import ActorEnvironment
from nemo_rl.workers.resolver import Resolution

logger = logging.getLogger(__name__)

# How long teardown waits for Ray to forget killed actors and removed groups.
TEARDOWN_WAIT_S = 15.0


class WorkerStartupError(RuntimeError):
    """A worker actor failed to start; names the worker class and the rank (and, on a
    cluster of several nodes, the node)."""

    def __init__(self, fqn: str, rank: int | None, reason: str, *, node: str | None = None) -> None:
        self.fqn = fqn
        self.rank = rank
        self.node = node
        where = f" rank {rank}" if rank is not None else ""
        where += f" on node {node}" if node is not None else ""
        super().__init__(f"worker {fqn}{where} failed to start: {reason}")


@dataclass(frozen=True)
class RayWorkerBuilder:
    """How to construct each worker: `cls(config, rank=, world_size=, **init_kwargs)`."""

    fqn: str
    env: ActorEnvironment
    config: Mapping[str, Any]
    init_kwargs: Mapping[str, object] = field(default_factory=dict)
    # The contract the class was resolved against; verified before allocation.
    protocol: str | None = None
    base_fqn: str | None = None
    section_path: str = "policy"
    # Call-time contracts inside the actor; default: NEMO_RL_CALL_CONTRACTS in {1, true}.
    enforce_contracts: bool = field(default_factory=call_contracts_enabled)

    @classmethod
    def from_resolution(
        cls,
        resolution: Resolution,
        config: Mapping[str, Any],
        *,
        init_kwargs: Mapping[str, object] | None = None,
        enforce_contracts: bool | None = None,
    ) -> RayWorkerBuilder:
        return cls(
            fqn=resolution.fqn,
            env=resolution.env,
            config=plain(config),
            init_kwargs=dict(init_kwargs or {}),
            protocol=resolution.protocol,
            base_fqn=resolution.base_fqn,
            section_path=resolution.section,
            enforce_contracts=call_contracts_enabled(enforce_contracts),
        )

    @property
    def init_call(self) -> InitCall:
        """The constructor call shape, exactly as `WorkerHost` makes it."""
        return InitCall(positional=("config",), keywords=("rank", "world_size", *self.init_kwargs))

    def check(self) -> WorkerCheck | None:
        if self.protocol is None:
            return None
        return WorkerCheck(self.fqn, self.protocol, self.base_fqn, self.init_call,
                           self.section_path, self.config)

    def runtime_env(self) -> dict[str, Any] | None:
        if self.env.is_driver:
            return None
        return {"py_executable": self.env.python}


def _load_class(fqn: str) -> type:
    """Import the (already verified) worker class inside the actor."""
    cls, problem = import_class(fqn, "worker", "a class")
    if problem is not None:
        raise ImportError(problem[3])  # (path, expected, given, message, rule)
    assert cls is not None
    return cls


class WorkerHost:
    """The actor body: imports the worker class in its environment and hosts one instance.

    Constructor errors are kept, not raised, so the driver gets the original exception
    (not only Ray's text) and can tear the whole group down.
    """

    def __init__(
        self,
        fqn: str,
        config: Mapping[str, Any],
        rank: int,
        world_size: int,
        init_kwargs: Mapping[str, object],
        protocol: str | None,
        enforce_contracts: bool,
    ) -> None:
        self._fqn = fqn
        self._worker: Any = None
        self._error: tuple[str, bytes | None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        try:
            cls = _load_class(fqn)
            if enforce_contracts and protocol is not None:
                cls = _with_call_contracts(cls, protocol)
            self._worker = cls(config, rank=rank, world_size=world_size, **init_kwargs)
        except Exception as err:
            text = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
            try:
                payload: bytes | None = pickle.dumps(err)
            except Exception:  # an unpicklable exception still reports its text
                payload = None
            self._error = (text, payload)

    def ready(self) -> tuple[str, bytes | None] | None:
        """None once the worker is constructed and alive; else (traceback, pickled error)."""
        if self._error is not None:
            return self._error
        alive = self._worker.is_alive()
        if alive is not True:
            return (f"is_alive() returned {alive!r}", None)
        return None

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call a worker method; coroutines are awaited and async generators collected."""
        result = getattr(self._worker, method)(*args, **kwargs)
        if inspect.iscoroutine(result):
            return self._event_loop().run_until_complete(result)
        if inspect.isasyncgen(result):
            return self._event_loop().run_until_complete(_collect(result))
        return result

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        # One loop for the actor's life: async engines bind to the loop they start on.
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop


async def _collect(gen: Any) -> list[Any]:
    return [item async for item in gen]


def _with_call_contracts(cls: type, protocol_name: str) -> type:
    """Wrap the Protocol's methods with call-time type checks, inside the actor."""
    wrapped: type = enforce_calls(cls, PROTOCOLS[protocol_name])
    return wrapped


class RayWorkerGroup:
    """`num_workers` named actors of one worker class, placed one per bundle."""

    def __init__(
        self,
        cluster: RayVirtualCluster,
        builder: RayWorkerBuilder,
        *,
        name_prefix: str,
        num_workers: int | None = None,
        workers_per_node: int | None = None,
        bundles_per_worker: int = 1,
        ready_timeout_s: float = 600.0,
    ) -> None:
        self.cluster = cluster
        self.builder = builder
        self.name_prefix = name_prefix
        self.fqn = builder.fqn
        self._actors: list[Any] = []
        self._released = False
        # Node of each rank, on a cluster of several nodes (for startup errors).
        self._nodes: list[str | None] = []
        # 1. The class is verified before anything is reserved (a cache hit when the
        #    caller's pipeline already did it); another environment's check runs on a
        #    node the bundles fit, where that environment is installed.
        check = builder.check()
        if check is not None:
            node = None if builder.env.is_driver else cluster.verification_node()
            verify_check(check, builder.env, node_id=node)
        # 2. Reserve, create, wait; any failure undoes all of it.
        try:
            slots = self._slots(num_workers, workers_per_node, bundles_per_worker)
            self._nodes = _rank_nodes(slots)
            world_size = len(slots)
            env_vars = _rendezvous_env_vars(slots)
            # All actors are created before any is awaited: ranks rendezvous with each other.
            for rank, (pg, bundle) in enumerate(slots):
                self._actors.append(self._create(rank, world_size, pg, bundle, env_vars))
            self._wait_ready(ready_timeout_s)
        except BaseException as err:
            self._teardown()
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                err.add_note(f"while starting {self.fqn}; its actors and placement groups are gone")
                raise
            if isinstance(err, WorkerStartupError):
                raise
            raise WorkerStartupError(self.fqn, None, f"{type(err).__name__}: {err}") from err
        self.world_size = len(self._actors)

    @property
    def actor_names(self) -> list[str]:
        return [self._name(rank) for rank in range(len(self._actors))]

    @property
    def workers(self) -> list[Any]:
        """The actor handles, by rank (`handle.call.remote(method, ...)`)."""
        return list(self._actors)

    def _name(self, rank: int) -> str:
        return f"{self.name_prefix}-{rank}"

    def _slots(
        self, num_workers: int | None, workers_per_node: int | None, bundles_per_worker: int
    ) -> list[tuple[Any, int]]:
        locations = self.cluster.acquire(self.name_prefix)
        per_node: list[list[tuple[Any, int]]] = []
        start = 0
        for count in self.cluster.bundle_ct_per_node_list:
            per_node.append(locations[start:start + count][::bundles_per_worker])
            start += count
        if workers_per_node is not None:
            short = [n for n, node in enumerate(per_node) if len(node) < workers_per_node]
            if short:
                raise ValueError(
                    f"workers_per_node={workers_per_node} x {bundles_per_worker} bundle(s) does "
                    f"not fit node(s) {short} of cluster {self.cluster.bundle_ct_per_node_list}."
                )
            slots = [s for node in per_node for s in node[:workers_per_node]]
        else:
            slots = [s for node in per_node for s in node]
        if num_workers is not None:
            if num_workers > len(slots):
                raise ValueError(
                    f"num_workers={num_workers} exceeds the {len(slots)} worker slot(s) of "
                    f"cluster {self.cluster.bundle_ct_per_node_list}."
                )
            slots = slots[:num_workers]
        return slots

    def _create(
        self, rank: int, world_size: int, pg: Any, bundle: int, env_vars: Mapping[str, str]
    ) -> Any:
        options: dict[str, Any] = {
            "name": self._name(rank),
            "max_restarts": 0,
            "scheduling_strategy": PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_bundle_index=bundle
            ),
            **self.cluster.actor_resources(),
        }
        runtime_env = dict(self.builder.runtime_env() or {})
        if env_vars:
            runtime_env["env_vars"] = {**runtime_env.get("env_vars", {}), **env_vars}
        if runtime_env:
            options["runtime_env"] = runtime_env
        b = self.builder
        return _remote_host().options(**options).remote(
            b.fqn, b.config, rank, world_size, dict(b.init_kwargs), b.protocol,
            b.enforce_contracts,
        )

    def _wait_ready(self, timeout_s: float) -> None:
        pending = {a.ready.remote(): rank for rank, a in enumerate(self._actors)}
        deadline = time.monotonic() + timeout_s
        while pending:
            left = deadline - time.monotonic()
            done, _ = ray.wait(list(pending), num_returns=1, timeout=max(left, 0.0))
            if not done:
                ranks = sorted(pending.values())
                raise WorkerStartupError(
                    self.fqn, ranks[0],
                    f"rank(s) {ranks} not alive after {timeout_s:.0f}s (not enough resources, "
                    "or a constructor that hangs)",
                )
            rank = pending.pop(done[0])
            try:
                error = ray.get(done[0])
            except RayError as err:
                died = f"the actor died: {type(err).__name__}: {_first_line(str(err))}"
                node = self._nodes[rank] if rank < len(self._nodes) else None
                raise WorkerStartupError(self.fqn, rank, died, node=node) from err
            if error is not None:
                text, payload = error
                original = _unpickle(payload)
                if original is not None:
                    raise WorkerStartupError(
                        self.fqn, rank, f"{type(original).__name__}: {original}"
                    ) from original
                # Not picklable: the first line names it; the traceback goes in a note.
                startup = WorkerStartupError(self.fqn, rank, _first_line(text))
                startup.add_note(text)
                raise startup

    def run_all(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call `method` on every worker; results by rank."""
        return self._get([a.call.remote(method, *args, **kwargs) for a in self._actors])

    def run_rank(self, rank: int, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._get([self._actors[rank].call.remote(method, *args, **kwargs)])[0]

    def run_sharded(self, method: str, shards: Sequence[object], *args: Any) -> list[Any]:
        """Call `method(shards[r], *args)` on rank r, for r < len(shards)."""
        if len(shards) > len(self._actors):
            raise ValueError(f"{len(shards)} shards for {len(self._actors)} workers")
        refs = [self._actors[r].call.remote(method, s, *args) for r, s in enumerate(shards)]
        return self._get(refs)

    def _get(self, refs: list[Any]) -> list[Any]:
        result: list[Any] = ray.get(refs)
        return result

    def shutdown(self, *, timeout_s: float = 30.0) -> None:
        """Ask workers to shut down, kill the actors, free the placement groups."""
        if self._released:
            return
        if self._actors:
            refs = [a.call.remote("shutdown") for a in self._actors]
            try:
                ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
            except RayError as err:  # a dead worker still gets killed below
                logger.warning("shutdown of %s workers failed: %s", self.name_prefix, err)
        self._teardown()

    def _teardown(self) -> None:
        """Kill every actor this group created and release its placement groups."""
        names = set(self.actor_names)
        for actor in self._actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception as err:  # already dead
                logger.debug("kill failed: %s", err)
        self._actors = []
        if not self._released:
            self.cluster.release(self.name_prefix)
            self._released = True
        _wait_gone(names)


def _rank_nodes(slots: list[tuple[Any, int]]) -> list[str | None]:
    """The node ID of each rank, when some rank runs off the driver's node (a cluster of
    several nodes); else Nones, as on one machine the node says nothing."""
    nodes = [bundle_node_id(pg, bundle) for pg, bundle in slots]
    here = ray.get_runtime_context().get_node_id()
    if all(node == here for node in nodes):
        return [None] * len(nodes)
    return list(nodes)


def _rendezvous_env_vars(slots: list[tuple[Any, int]]) -> dict[str, str]:
    """MASTER_ADDR/MASTER_PORT for a group of more than one rank (none for one), so its
    workers can form a torch.distributed group without a constructor argument; the
    driver's NEMO_RL_DIST_TIMEOUT_S travels along."""
    if len(slots) < 2:
        return {}
    addr, port = rendezvous_address(slots)
    timeout = os.environ.get(TIMEOUT_ENV)
    return rendezvous_env(addr, port, float(timeout) if timeout else None)


def _wait_gone(names: set[str]) -> None:
    """Wait until Ray no longer lists the killed actors, so counts are exact afterwards."""
    deadline = time.monotonic() + TEARDOWN_WAIT_S
    while names and time.monotonic() < deadline:
        live = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
        if not names & live:
            return
        time.sleep(0.05)


def _unpickle(payload: bytes | None) -> BaseException | None:
    if payload is None:
        return None
    try:
        err = pickle.loads(payload)
    except Exception:  # the exception's class is not importable here
        return None
    return err if isinstance(err, BaseException) else None


_HOST: Any = None


def _remote_host() -> Any:
    """The Ray actor class of WorkerHost (decorated once, lazily)."""
    global _HOST
    if _HOST is None:
        _HOST = ray.remote(WorkerHost)
    return _HOST


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), text)
