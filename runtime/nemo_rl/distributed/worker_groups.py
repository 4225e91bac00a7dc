"""Worker groups: named Ray actors hosting one verified worker class, one per bundle.

The order is fixed: verify the class in its environment and check that the actors'
environment can import it (each once per class, cached), then reserve placement groups,
then create actors `<name_prefix>-<rank>`, then wait until each answers `is_alive`. If
anything fails after the first reservation, everything this group created is torn down
before the error is raised, so a failed start leaves no actor and no placement group behind.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import pickle
import time
import traceback
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import ray
from ray.exceptions import RayError
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
from typing_extensions import TypeForm, deprecated, is_protocol

from contracts.calltime import call_contracts_enabled, enforce_calls
from contracts.init_call import InitCall
from nemo_rl.distributed.call_errors import (
    WorkerCallError,
    WorkerMethodError,
    as_instance_of_cause,
)
from nemo_rl.distributed.call_outcomes import collect
from nemo_rl.distributed.narrowing import verify_narrowing
from nemo_rl.distributed.presence import RANK_ENV, clear_presence, presence_env
from nemo_rl.distributed.rendezvous import TIMEOUT_ENV, rendezvous_env
from nemo_rl.distributed.verification import verify_actors_can_import, verify_check
from nemo_rl.distributed.virtual_cluster import (
    ClusterAllocationError,
    RayVirtualCluster,
    bundle_node_id,
    rendezvous_address,
)
from nemo_rl_workers.checks.contract.contract_check import WorkerCheck, import_class, plain
from nemo_rl_workers.model.protocols import extends, load_protocol, members, protocol_ref
from nemo_rl_workers.model.registry import ActorEnvironment
from nemo_rl_workers.model.resolver import Resolution

logger = logging.getLogger(__name__)

# The worker Protocol a group is typed by (covariant: a group verified against a wider
# Protocol serves as one of a narrower Protocol), a method's parameters, its result.
W = TypeVar("W", covariant=True)
N = TypeVar("N")
P = ParamSpec("P")
S = TypeVar("S")
R = TypeVar("R")

# The text of the deprecated by-name overloads (type checkers need it literally there).
STRING_CALL_DEPRECATION = (
    "calling workers by method name is deprecated; pass the Protocol's method object, "
    "e.g. group.run_all(PolicyWorker.save_checkpoint, path)"
)

# How long teardown waits for Ray to forget killed actors and removed groups.
TEARDOWN_WAIT_S = 15.0
# A call's time limit when neither the group nor its config section (`call_timeout_s`)
# sets one: None, no limit (a train step may take hours); hangs inside a data-parallel
# step still end at the ranks' own rendezvous/collective timeout (NEMO_RL_DIST_TIMEOUT_S).
DEFAULT_CALL_TIMEOUT_S: float | None = None
# Once a rank failed, how long the others get to answer before the call ends.
DEFAULT_SETTLE_S = 3.0
# How long shutdown() waits for the workers' own `shutdown` before killing them.
DEFAULT_SHUTDOWN_GRACE_S = 5.0

class _Unset:
    """The type of UNSET: an argument not given (None means "no limit")."""


UNSET = _Unset()


__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "DEFAULT_SETTLE_S",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "STRING_CALL_DEPRECATION",
    "RayWorkerBuilder",
    "RayWorkerGroup",
    "WorkerCallError",
    "WorkerMethodError",
    "WorkerStartupError",
]


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
        presence: str | None = None,
    ) -> None:
        self._fqn = fqn
        # Set in the actor's own process, not in its runtime_env: the ranks of a group then
        # share one runtime_env (Ray reuses its worker processes), and collectives report
        # waits under this group's key (nemo_rl.distributed.presence).
        if presence is not None:
            os.environ.update({**presence_env(presence), RANK_ENV: str(rank)})
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

    def shutdown_worker(self) -> object:
        """The worker's own `shutdown` (every role's Protocol has one), before the kill."""
        return self._worker.shutdown() if self._worker is not None else None

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        # One loop for the actor's life: async engines bind to the loop they start on.
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop


async def _collect(gen: Any) -> list[Any]:
    return [item async for item in gen]


def _with_call_contracts(cls: type, protocol_name: str) -> type:
    """Wrap the Protocol's methods with call-time type checks, inside the actor."""
    protocol, unknown = load_protocol(protocol_name)
    if protocol is None:
        raise ImportError(unknown)
    wrapped: type = enforce_calls(cls, protocol)
    return wrapped


class RayWorkerGroup(Generic[W]):
    """`num_workers` named actors of one worker class, placed one per bundle.

    Typed by the worker Protocol `W` its class was verified against: calls take `W`'s
    method objects (`group.run_all(PolicyWorker.train, batch)`), so both type checkers
    check the arguments and the results; `narrow(P)` gives the same actors typed by `P`.
    """

    def __init__(
        self,
        cluster: RayVirtualCluster,
        builder: RayWorkerBuilder,
        *,
        protocol: TypeForm[W],
        name_prefix: str,
        num_workers: int | None = None,
        workers_per_node: int | None = None,
        bundles_per_worker: int = 1,
        ready_timeout_s: float = 600.0,
        call_timeout_s: float | None | _Unset = UNSET,
        settle_s: float = DEFAULT_SETTLE_S,
        shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    ) -> None:
        self.cluster = cluster
        # Each call's limit: this argument, else the section's `call_timeout_s`, else
        # DEFAULT_CALL_TIMEOUT_S; None is no limit.
        self.call_timeout_s = _call_timeout(call_timeout_s, builder.config)
        self.settle_s = _seconds_arg("settle_s", settle_s)
        self.shutdown_grace_s = _seconds_arg("shutdown_grace_s", shutdown_grace_s)
        # Set by a call that left the group unusable (a rank died or did not answer).
        self._broken: WorkerCallError | None = None
        self._presence = f"{name_prefix}-{uuid.uuid4().hex[:12]}"
        self._node_ids: list[str | None] = []
        self.builder = builder
        self.name_prefix = name_prefix
        self.fqn = builder.fqn
        self._actors: list[Any] = []
        self._released = False
        # Node of each rank, on a cluster of several nodes (for startup errors).
        self._nodes: list[str | None] = []
        # 1. The class is verified before anything is reserved (a cache hit when the
        #    caller's pipeline already did it; another environment's check runs on a node
        #    the bundles fit, where that environment is installed), then asked of the
        #    actors' own environment: a module on the driver's path only would pass the
        #    first and fail every actor.
        # 0. A shape no live node can ever hold is refused at once, before verification.
        cluster.check_fit()
        check = builder.check()
        if check is not None:
            node = None if builder.env.is_driver else cluster.verification_node()
            verify_check(check, builder.env, node_id=node)
        verify_actors_can_import(
            builder.fqn, builder.section_path, builder.runtime_env(), cluster.candidate_nodes()
        )
        self._root: RayWorkerGroup[Any] = self
        self._verified: list[type] = [p for p in [_resolved_protocol(builder)] if p is not None]
        self._typed_as(protocol)  # verified against `W` as well, unless its contract includes W
        # 2. Reserve, create, wait; any failure undoes all of it.
        try:
            slots = self._slots(num_workers, workers_per_node, bundles_per_worker)
            self._node_ids = [bundle_node_id(pg, bundle) for pg, bundle in slots]
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
            if isinstance(err, WorkerStartupError | ClusterAllocationError):
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
            b.enforce_contracts, self._presence,
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

    # Each call has one overload per kind of method: an async generator's items come back
    # as a list per worker, a coroutine's awaited result, a plain method's result; the last,
    # deprecated overload is the old by-name call.

    @overload
    def run_all(
        self, method: Callable[Concatenate[W, P], AsyncIterator[R]], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> list[list[R]]: ...

    @overload
    def run_all(
        self, method: Callable[Concatenate[W, P], Coroutine[Any, Any, R]], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> list[R]: ...

    @overload
    def run_all(
        self, method: Callable[Concatenate[W, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> list[R]: ...

    @overload
    @deprecated(
        "calling workers by method name is deprecated; pass the Protocol's method object, "
        "e.g. group.run_all(PolicyWorker.save_checkpoint, path)"
    )
    def run_all(self, method: str, /, *args: Any, **kwargs: Any) -> list[Any]: ...

    def run_all(self, method: Callable[..., object] | str, /, *args: Any, **kwargs: Any) -> Any:
        """Call `method` on every worker; results by rank."""
        name = self._method_name(method)
        actors = self._usable_actors()
        return self._call(name, list(range(len(actors))),
                          [a.call.remote(name, *args, **kwargs) for a in actors])

    @overload
    def run_rank(
        self, rank: int, method: Callable[Concatenate[W, P], AsyncIterator[R]], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> list[R]: ...

    @overload
    def run_rank(
        self, rank: int, method: Callable[Concatenate[W, P], Coroutine[Any, Any, R]], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> R: ...

    @overload
    def run_rank(
        self, rank: int, method: Callable[Concatenate[W, P], R], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> R: ...

    @overload
    @deprecated(
        "calling workers by method name is deprecated; pass the Protocol's method object, "
        "e.g. group.run_all(PolicyWorker.save_checkpoint, path)"
    )
    def run_rank(self, rank: int, method: str, /, *args: Any, **kwargs: Any) -> Any: ...

    def run_rank(
        self, rank: int, method: Callable[..., object] | str, /, *args: Any, **kwargs: Any
    ) -> Any:
        """Call `method` on one worker; its result."""
        name = self._method_name(method)
        actor = self._usable_actors()[rank]
        return self._call(name, [rank], [actor.call.remote(name, *args, **kwargs)])[0]

    @overload
    def run_sharded(
        self, method: Callable[Concatenate[W, S, P], AsyncIterator[R]], shards: Sequence[S], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> list[list[R]]: ...

    @overload
    def run_sharded(
        self, method: Callable[Concatenate[W, S, P], Coroutine[Any, Any, R]],
        shards: Sequence[S], /, *args: P.args, **kwargs: P.kwargs,
    ) -> list[R]: ...

    @overload
    def run_sharded(
        self, method: Callable[Concatenate[W, S, P], R], shards: Sequence[S], /,
        *args: P.args, **kwargs: P.kwargs,
    ) -> list[R]: ...

    @overload
    @deprecated(
        "calling workers by method name is deprecated; pass the Protocol's method object, "
        "e.g. group.run_all(PolicyWorker.save_checkpoint, path)"
    )
    def run_sharded(
        self, method: str, shards: Sequence[object], /, *args: Any, **kwargs: Any
    ) -> list[Any]: ...

    def run_sharded(
        self, method: Callable[..., object] | str, shards: Sequence[object], /,
        *args: Any, **kwargs: Any,
    ) -> Any:
        """Call `method(shards[r], *args, **kwargs)` on rank r, for r < len(shards)."""
        name = self._method_name(method)
        actors = self._usable_actors()
        if len(shards) > len(actors):
            raise ValueError(f"{len(shards)} shards for {len(actors)} workers")
        return self._call(
            name, list(range(len(shards))),
            [actors[r].call.remote(name, s, *args, **kwargs) for r, s in enumerate(shards)],
        )

    def narrow(self, protocol: TypeForm[N]) -> RayWorkerGroup[N]:
        """The same actors, typed by `protocol`: at once when the class was verified against
        a Protocol that includes it; otherwise after verifying the class against it in its
        own environment (once; `ContractError` listing every violation)."""
        view: RayWorkerGroup[N] = object.__new__(RayWorkerGroup)
        view.__dict__.update(self.__dict__)
        view._typed_as(protocol)
        return view

    @property
    def protocol(self) -> type:
        """The Protocol this group's calls are typed by."""
        return self._protocol

    def _typed_as(self, protocol: object) -> None:
        if not isinstance(protocol, type) or not is_protocol(protocol):
            raise TypeError(f"a worker group is typed by a typing.Protocol class, not {protocol!r}")
        root = self._root
        if not any(extends(done, protocol) for done in root._verified):
            verify_narrowing(self.fqn, protocol, self.builder.env)
            root._verified.append(protocol)
        self._protocol = protocol
        self._members = members(protocol)

    def _method_name(self, method: Callable[..., object] | str) -> str:
        """The remote method's name; refused here unless it is a member of the Protocol."""
        if isinstance(method, str):
            warnings.warn(STRING_CALL_DEPRECATION, DeprecationWarning, stacklevel=3)
            name = method
        else:
            name = getattr(method, "__name__", repr(method))
        if name not in self._members:
            raise WorkerMethodError(self.fqn, protocol_ref(self._protocol), name)
        return name

    @property
    def broken(self) -> WorkerCallError | None:
        """The error of the call that left this group unusable (a rank died or did not
        answer), or None; every later call raises it at once, until shutdown()."""
        return self._root._broken

    def _usable_actors(self) -> list[Any]:
        root = self._root
        if root._broken is not None:
            raise root._broken
        if root._released:
            raise RuntimeError(f"the {self.fqn} worker group {self.name_prefix!r} is shut down")
        return root._actors

    def _call(self, method: str, ranks: list[int], refs: list[Any]) -> list[Any]:
        """Every rank's answer, or one WorkerCallError naming the faulty rank(s)."""
        root = self._root
        nodes = [root._node_ids[r] if r < len(root._node_ids) else None for r in ranks]
        result, causes = collect(refs, ranks, nodes, timeout_s=root.call_timeout_s,
                                 settle_s=root.settle_s, presence_prefix=root._presence)
        if not result.failed:
            return result.values
        err = WorkerCallError.from_outcomes(
            method, self.fqn, len(root._actors), result.outcomes,
            call_timeout_s=root.call_timeout_s, settle_s=root.settle_s,
        )
        # A rank that died or is still busy (hung, blocked) cannot take another call.
        if any(o.state not in ("ok", "raised", "cancelled") for o in result.outcomes):
            err.add_note(f"the worker group {self.name_prefix!r} is broken: every later call "
                         "raises this error at once; call shutdown()")
            root._broken = err
        cause = causes.get(err.ranks[0]) if err.ranks else None
        if cause is not None and err.remote_traceback:
            cause.add_note(f"remote traceback (rank {err.ranks[0]}):\n{err.remote_traceback}")
        if cause is not None and err.kind == "raised":
            err = as_instance_of_cause(err, cause)  # `except RemoteError` still catches it
        raise err from cause

    def shutdown(self, *, grace_s: float | None = None, timeout_s: float | None = None) -> None:
        """Ask the workers to shut down, wait up to `grace_s` (default: the group's
        `shutdown_grace_s`, 5 s) for them, kill every actor, free the placement groups and
        wait until Ray's record shows none of them alive. Ranks known dead or busy (after a
        failed call) are killed without being asked. `timeout_s` is the older name of
        `grace_s`."""
        if grace_s is None:
            grace_s = timeout_s
        if self._root is not self:  # a narrowed view: the group that owns the actors
            self._root.shutdown(grace_s=grace_s)
            return
        if self._released:
            return
        grace = self.shutdown_grace_s if grace_s is None else _seconds_arg("grace_s", grace_s)
        busy: set[int] = set()
        if self._broken is not None:
            busy = {o.rank for o in self._broken.outcomes if o.state not in ("ok", "raised")}
        askable = [a for r, a in enumerate(self._actors) if r not in busy]
        if askable and grace > 0:
            refs = [a.shutdown_worker.remote() for a in askable]
            try:
                ray.wait(refs, num_returns=len(refs), timeout=grace)
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
        clear_presence(self._presence)


def _seconds_arg(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
        0 <= value < float("inf")
    ):
        raise ValueError(f"{name} must be a finite number of seconds >= 0, but is {value!r}")
    return float(value)


def _call_timeout(given: float | None | _Unset, config: Mapping[str, Any]) -> float | None:
    """The group's call timeout: the argument, else the section's, else the default."""
    if isinstance(given, _Unset):
        if "call_timeout_s" not in config:
            return DEFAULT_CALL_TIMEOUT_S
        given = config["call_timeout_s"]
    if given is None:
        return None
    seconds = _seconds_arg("call_timeout_s", given)
    if seconds == 0:
        raise ValueError("call_timeout_s must be a positive number of seconds or None (no limit)")
    return seconds


def _resolved_protocol(builder: RayWorkerBuilder) -> type | None:
    """The Protocol the builder's class was verified against before allocation."""
    if builder.protocol is None:
        return None
    protocol, unknown = load_protocol(builder.protocol)
    if protocol is None:  # verify_check already refused such a reference
        raise ImportError(unknown)
    return protocol


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
