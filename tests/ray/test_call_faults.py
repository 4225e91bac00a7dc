"""Faults during a call, injected on purpose (tests/ray/call_fault_workers.py), end in one
sentence naming the method, the rank(s), the node and the class; a dead or silent rank
breaks the group; shutdown after any fault is bounded and leaves nothing alive in Ray's
record. Time bounds are loose: the machine is a loaded 2-core one."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import ray
from nemo_rl.distributed.inventory import RayRecord, ray_record
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup, WorkerCallError

from contracts.protocols import PolicyWorker
from contracts.types import TrainBatch
from nemo_rl_workers.model.registry import DRIVER_ENV
from tests.ray.call_fault_workers import BARRIER, FAULT_FQN, InjectedFault

pytestmark = pytest.mark.ray

BATCH: TrainBatch = {"input_ids": [[1, 2, 3]]}
# Bounds for a loaded machine; the bench measures the real figures.
FAULT_BOUND_S = 20.0
SHUTDOWN_BOUND_S = 10.0


@dataclass
class Started:
    group: RayWorkerGroup[PolicyWorker]
    cluster: RayVirtualCluster
    before: RayRecord


@contextmanager
def started(
    fault: dict[str, Any], workers: int = 2, **section: Any
) -> Generator[Started]:
    """A group of CallFaultWorker with `fault` in its section; on exit, shutdown must take
    at most SHUTDOWN_BOUND_S and leave every actor dead and every placement group removed."""
    before = ray_record()
    name = f"fault_{fault.get('kind', 'x')}_{workers}_{time.monotonic_ns() % 10**9}"
    cluster = RayVirtualCluster([workers], use_gpus=False, name=name)
    builder = RayWorkerBuilder(fqn=FAULT_FQN, env=DRIVER_ENV,
                               config={"fault": fault, **section}, protocol="PolicyWorker")
    group: RayWorkerGroup[PolicyWorker] = RayWorkerGroup(
        cluster, builder, protocol=PolicyWorker, name_prefix=name, num_workers=workers,
        settle_s=2.0,
    )
    try:
        yield Started(group, cluster, before)
    finally:
        start = time.monotonic()
        group.shutdown()
        cluster.shutdown()
        took = time.monotonic() - start
        assert took <= SHUTDOWN_BOUND_S, f"shutdown took {took:.1f}s"
        assert_nothing_alive(before)


def assert_nothing_alive(before: RayRecord) -> None:
    created = ray_record().since(before)
    assert created.actors, "the group created actors; the record must show them"
    alive = [d for d in created.actors.values() if not d.endswith(" DEAD")]
    assert alive == [], created.describe()
    live = [d for d in created.placement_groups.values() if not d.endswith(" REMOVED")]
    assert live == [], created.describe()


def wait_until_dead(handle: Any, limit_s: float = 30.0) -> None:
    """Until Ray's actor table records `handle`'s actor as DEAD (bounded)."""
    from ray._private import state  # the GCS actor table, as call_outcomes reads it

    actor_id = handle._actor_id.hex()
    deadline = time.monotonic() + limit_s
    while state.actors(actor_id=actor_id).get("State") != "DEAD":
        assert time.monotonic() < deadline, f"actor {actor_id} still alive after {limit_s} s"
        time.sleep(0.05)


def failing_call(group: RayWorkerGroup[PolicyWorker]) -> tuple[WorkerCallError, float]:
    start = time.monotonic()
    with pytest.raises(WorkerCallError) as info:
        group.run_all(PolicyWorker.train, BATCH)
    took = time.monotonic() - start
    assert took < FAULT_BOUND_S, f"the fault took {took:.1f}s to end in an error"
    return info.value, took


def node_of(group: RayWorkerGroup[PolicyWorker]) -> str:
    """The short node ID the sentence shows (one node here)."""
    node = ray.get_runtime_context().get_node_id()
    return f"{node[:8]}…"


def sentence_start(group: RayWorkerGroup[PolicyWorker], verb: str, ranks: str, of: int) -> str:
    return f"train {verb} on {ranks} of {of} ({FAULT_FQN} on node {node_of(group)}): "


@pytest.mark.parametrize("on_call", [1, 2], ids=["first-call", "after-a-good-step"])
def test_a_rank_that_raises_is_named_with_its_error_and_the_group_stays_usable(
    ray_cluster: None, on_call: int
) -> None:
    with started({"kind": "raise", "ranks": [1], "on_call": on_call}) as s:
        if on_call == 2:
            assert [r["step"] for r in s.group.run_all(PolicyWorker.train, BATCH)] == [1, 1]
        err, _ = failing_call(s.group)
        assert str(err) == (sentence_start(s.group, "failed", "rank 1", 2)
                            + "RuntimeError: injected fault: rank 1 raises"
                            ).replace("RuntimeError", "InjectedFault")
        assert "\x1b" not in str(err) and "ActorHandle" not in str(err)
        assert (err.kind, err.ranks, err.method, err.fqn) == ("raised", (1,), "train", FAULT_FQN)
        assert err.error_type == "InjectedFault"
        assert isinstance(err.__cause__, InjectedFault)
        assert isinstance(err, InjectedFault)  # `except InjectedFault` still catches it
        assert err.remote_traceback is not None and "_fault" in err.remote_traceback
        assert [o.state for o in err.outcomes] == ["ok", "raised"]
        # Every rank answered: the group is intact and the next step runs on both.
        assert s.group.broken is None
        steps = [r["step"] for r in s.group.run_all(PolicyWorker.train, BATCH)]
        assert steps == [on_call + 1] * 2


def test_several_ranks_failing_at_once_are_named_together(ray_cluster: None) -> None:
    with started({"kind": "raise", "ranks": [1, 3]}, workers=4) as s:
        err, _ = failing_call(s.group)
        assert str(err).startswith(sentence_start(s.group, "failed", "ranks 1, 3", 4))
        assert err.ranks == (1, 3)
        assert [o.state for o in err.outcomes] == ["ok", "raised", "ok", "raised"]


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        ("exit", "its process exited unexpectedly: a crash, os._exit, or the OOM killer"),
        ("kill", "killed by ray.kill"),
    ],
)
def test_a_rank_that_dies_during_a_call_breaks_the_group(
    ray_cluster: None, kind: str, cause: str
) -> None:
    with started({"kind": kind, "ranks": [1]}) as s:
        err, _ = failing_call(s.group)
        assert str(err) == sentence_start(s.group, "failed", "rank 1", 2) + (
            f"the worker died ({cause})")
        assert (err.kind, err.ranks, err.death_cause) == ("died", (1,), cause)
        # Broken: every later call fails at once with the same error, until shutdown.
        start = time.monotonic()
        with pytest.raises(WorkerCallError) as again:
            s.group.run_rank(0, PolicyWorker.is_alive)
        assert again.value is err and s.group.broken is err
        assert time.monotonic() - start < 1.0


def test_a_rank_killed_between_calls_is_reported_dead_on_the_next_call(
    ray_cluster: None,
) -> None:
    with started({"kind": "slow", "ranks": [], "seconds": 0}) as s:
        s.group.run_all(PolicyWorker.train, BATCH)  # a good step first
        ray.kill(s.group.workers[0])
        # ray.kill returns before the actor is gone: a call made at once may still run.
        # "Between calls" means the death is on record before the next call.
        wait_until_dead(s.group.workers[0])
        err, _ = failing_call(s.group)
        assert str(err) == sentence_start(s.group, "failed", "rank 0", 2) + (
            "the worker died (killed by ray.kill)")


def test_a_hung_rank_is_named_apart_from_the_rank_blocked_waiting_for_it(
    ray_cluster: None,
) -> None:
    # The call timeout comes from the section, as policy.call_timeout_s would.
    fault = {"kind": "hang", "ranks": [1], "barrier_s": 120}
    with started(fault, call_timeout_s=3) as s:
        assert s.group.call_timeout_s == 3.0
        err, took = failing_call(s.group)
        assert took >= 3.0
        assert str(err) == sentence_start(s.group, "hung", "rank 1", 2) + (
            f"no answer within 3 s (call_timeout_s); rank 0 is blocked in {BARRIER} "
            "waiting for it")
        assert (err.kind, err.ranks) == ("hung", (1,))
        assert [o.state for o in err.outcomes] == ["blocked", "hung"]
        assert s.group.broken is err


def test_without_a_call_timeout_the_peers_give_up_and_the_sentence_names_the_hung_rank(
    ray_cluster: None,
) -> None:
    # No call timeout: rank 0's own collective timeout (2 s) ends the call, in the same
    # sentence, which names rank 1, not rank 0.
    with started({"kind": "hang", "ranks": [1], "barrier_s": 2}) as s:
        assert s.group.call_timeout_s is None
        err, _ = failing_call(s.group)
        assert str(err) == sentence_start(s.group, "hung", "rank 1", 2) + (
            f"rank 0 gave up waiting for it in {BARRIER} after 2 s")
        assert err.ranks == (1,) and err.kind == "hung"


def test_every_rank_hung_outside_any_collective_is_named(ray_cluster: None) -> None:
    with started({"kind": "hang", "ranks": [0, 1]}, call_timeout_s=2) as s:
        err, _ = failing_call(s.group)
        assert str(err) == sentence_start(s.group, "hung", "ranks 0, 1", 2) + (
            "no answer within 2 s (call_timeout_s)")


def test_a_slow_call_within_the_timeout_succeeds(ray_cluster: None) -> None:
    with started({"kind": "slow", "ranks": [0, 1], "seconds": 1.5}, call_timeout_s=15) as s:
        assert [r["step"] for r in s.group.run_all(PolicyWorker.train, BATCH)] == [1, 1]
        assert s.group.broken is None


def test_a_kill_from_another_thread_during_a_call_ends_it_as_died(ray_cluster: None) -> None:
    with started({"kind": "hang", "ranks": [1]}) as s:
        victim = s.group.workers[1]
        timer = threading.Timer(1.0, ray.kill, [victim])
        timer.start()
        try:
            err, _ = failing_call(s.group)
        finally:
            timer.cancel()
        assert re.match(re.escape(sentence_start(s.group, "failed", "rank 1", 2))
                        + r"the worker died \(killed by ray\.kill\)", str(err))
        # Rank 0 answered; only rank 1 is named.
        assert [o.state for o in err.outcomes] == ["ok", "died"]


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), True, "5"])
def test_a_bad_call_timeout_is_refused_before_anything_is_created(
    ray_cluster: None, value: object
) -> None:
    cluster = RayVirtualCluster([1], use_gpus=False, name="bad_timeout")
    builder = RayWorkerBuilder(fqn=FAULT_FQN, env=DRIVER_ENV, config={},
                               protocol="PolicyWorker")
    before = ray_record()
    with pytest.raises(ValueError, match="call_timeout_s must be"):
        RayWorkerGroup(cluster, builder, protocol=PolicyWorker, name_prefix="bad_timeout",
                       call_timeout_s=value)  # type: ignore[arg-type]  # the hostile value
    assert ray_record().since(before).empty
