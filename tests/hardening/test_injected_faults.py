"""Faults injected on purpose while a worker group starts, on the local Ray cluster.

Two kinds. Faults in a worker's constructor or process strike after every pre-allocation
check passed, when placement groups and actors exist: each must end in a clear error
naming the worker class, Ray's record must show the start really allocated, and the live
actors and placement groups must be exactly as before (all torn down). Faults in the
verification environment (an interpreter that is missing, or never starts) must be
refused before allocation: Ray's record shows nothing was ever created. Either way the
caller's config is unchanged (nothing committed).
"""

from __future__ import annotations

import _thread
import copy
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.inventory import ray_record, ray_resources_snapshot
from nemo_rl.distributed.verification import VERIFY_TIMEOUT_ENV, clear_verification_cache
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import WorkerStartupError
from nemo_rl.models.policy.lm_policy import Policy

from nemo_rl_workers.model.registry import ActorEnvironment, WorkerRegistry
from nemo_rl_workers.reading.loader import load_config
from tests.hardening.fault_workers import (
    FAULTY_RANK,
    SLEEP_KEY,
    STARTED_MARKER_KEY,
    ExitingInitWorker,
    SlowInitWorker,
    UnpicklableErrorInitWorker,
    hardening_registry,
)
from tests.ray.fault_workers import fqn_of
from tests.ray.observed import refused_cleanly

pytestmark = pytest.mark.ray

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="hardening-faults")
    yield cluster
    cluster.shutdown()


def section_for(cls: type, **extra: object) -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    section["worker_extension_cls_fqn"] = fqn_of(cls)
    section.update(extra)
    return section


def fails_cleanly(
    start: Callable[[], object], section: dict[str, Any], error: type[BaseException]
) -> BaseException:
    """Run `start`, which must raise `error` after allocating, and leave the live resources
    and the config as they were."""
    section_before = copy.deepcopy(section)
    before = ray_resources_snapshot()
    record_before = ray_record()
    with pytest.raises(error) as info:
        start()
    assert ray_resources_snapshot() == before
    created = ray_record().since(record_before)
    assert created.actors and created.placement_groups, "the fault struck before allocation"
    assert section == section_before
    return info.value


@pytest.mark.slow
def test_unpicklable_init_error_on_one_rank(cluster: RayVirtualCluster) -> None:
    section = section_for(UnpicklableErrorInitWorker)
    err = fails_cleanly(
        lambda: Policy(cluster, section, name_prefix="unpicklable", registry=hardening_registry()),
        section, WorkerStartupError,
    )
    assert isinstance(err, WorkerStartupError)
    assert (err.fqn, err.rank) == (fqn_of(UnpicklableErrorInitWorker), FAULTY_RANK)
    assert fqn_of(UnpicklableErrorInitWorker) in str(err)
    # The exception could not travel back; its type and message still do, on one line,
    # and its traceback rides along as a note.
    assert "UnpicklableInitError: injected fault: rank 1 holds a lock" in str(err)
    assert "\n" not in str(err)
    assert "Traceback" in "\n".join(err.__notes__)


@pytest.mark.slow
def test_process_exit_during_init(cluster: RayVirtualCluster) -> None:
    section = section_for(ExitingInitWorker)
    err = fails_cleanly(
        lambda: Policy(cluster, section, name_prefix="exiting", registry=hardening_registry()),
        section, WorkerStartupError,
    )
    assert isinstance(err, WorkerStartupError)
    assert (err.fqn, err.rank) == (fqn_of(ExitingInitWorker), FAULTY_RANK)
    assert f"worker {fqn_of(ExitingInitWorker)} rank 1 failed to start: the actor died" in str(err)


def gone_registry(python: str) -> WorkerRegistry:
    return hardening_registry({fqn_of(ExitingInitWorker): ActorEnvironment("gone", python)})


def test_verification_environment_without_its_python(cluster: RayVirtualCluster) -> None:
    clear_verification_cache()
    section = section_for(ExitingInitWorker)
    python = "/nonexistent/venv/bin/python"
    started = time.monotonic()
    err = refused_cleanly(
        lambda: Policy(cluster, section, name_prefix="gone", registry=gone_registry(python)),
        section, cluster,
    )
    assert time.monotonic() - started < 10  # refused up front, not after a timeout
    (problem,) = err.problems
    assert (problem.path, problem.given) == (FIELD, python)
    assert fqn_of(ExitingInitWorker) in problem.message and "'gone'" in problem.message


def test_verification_environment_whose_python_never_starts(
    cluster: RayVirtualCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interpreter that exists but is no Python: the verification task never runs; the
    driver gives up after NEMO_RL_VERIFY_TIMEOUT_S instead of hanging."""
    monkeypatch.setenv(VERIFY_TIMEOUT_ENV, "3")
    clear_verification_cache()
    section = section_for(ExitingInitWorker)
    err = refused_cleanly(
        lambda: Policy(cluster, section, name_prefix="false", registry=gone_registry("/bin/false")),
        section, cluster,
    )
    (problem,) = err.problems
    assert (problem.path, problem.given) == (FIELD, "/bin/false")
    assert fqn_of(ExitingInitWorker) in problem.message
    assert "did not finish within 3s" in problem.message


@pytest.mark.slow
def test_keyboard_interrupt_while_the_group_starts(
    cluster: RayVirtualCluster, tmp_path: Path
) -> None:
    marker = tmp_path / "rank1-started"
    section = section_for(SlowInitWorker, **{STARTED_MARKER_KEY: str(marker), SLEEP_KEY: 60})

    finished = threading.Event()

    def interrupt_once_rank_1_is_starting() -> None:
        # Deterministic: rank 1's constructor has begun (rank 0 and both actors exist)
        # and sleeps far longer than this test runs; only then is the driver interrupted,
        # and never once the start is over (a stray interrupt would stop the test session).
        while not marker.exists():
            if finished.wait(0.05):
                return
        if not finished.is_set():
            _thread.interrupt_main()

    timer = threading.Thread(target=interrupt_once_rank_1_is_starting, daemon=True)
    started = time.monotonic()
    timer.start()
    try:
        err = fails_cleanly(
            lambda: Policy(cluster, section, name_prefix="interrupted",
                           registry=hardening_registry()),
            section, KeyboardInterrupt,
        )
    finally:
        finished.set()
    assert f"while starting {fqn_of(SlowInitWorker)}" in "\n".join(getattr(err, "__notes__", []))
    timer.join(timeout=5)
    assert marker.exists()  # the interrupt came while rank 1 was starting
    assert time.monotonic() - started < 50  # it did not wait for rank 1's 60 s sleep
