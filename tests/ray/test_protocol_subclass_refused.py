"""Issue 10: a worker that subclasses its Protocol and forgets a member is refused
before allocation, in `verify`, `check` and the worker group's pre-allocation check.

`ForgetsLogprobs` lists `PolicyWorker` first among its bases, the usual way to write
against a Protocol: the Protocol's `...` body of `get_logprobs` comes before the
default worker's in the MRO, so every call would return None. A fault injected on
purpose, defined here (the shared fault_workers module belongs to another change).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.inventory import (
    live_placement_group_count,
    named_actor_count,
    ray_resources_snapshot,
)
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker

from contracts import ContractError, PolicyWorker, check, verify
from contracts.types import TrainBatch, TrainResult
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import DRIVER_ENV
from nemo_rl_workers.reading.loader import load_config
from tests.ray.fault_workers import fault_registry, fqn_of

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"


class ForgetsLogprobs(PolicyWorker, AutomodelPolicyWorker):
    """Overrides everything but `get_logprobs`, which resolves to the Protocol's `...`."""

    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return AutomodelPolicyWorker.train(self, batch)

    def save_checkpoint(self, path: str) -> None:
        AutomodelPolicyWorker.save_checkpoint(self, path)

    def load_checkpoint(self, path: str) -> None:
        AutomodelPolicyWorker.load_checkpoint(self, path)

    def shutdown(self) -> bool:
        return True


EXPECTED = (
    f"{fqn_of(ForgetsLogprobs)} does not implement PolicyWorker.get_logprobs: missing: only "
    "the abstract body in Protocol PolicyWorker provides it (a call would return None) "
    "[contracts/protocols.py:"
)


def test_check_and_verify_name_the_member() -> None:
    (violation,) = check(ForgetsLogprobs, PolicyWorker).violations
    assert (violation.rule, violation.member) == ("missing", "get_logprobs")
    assert str(violation).startswith(EXPECTED)
    with pytest.raises(ContractError) as caught:
        verify(ForgetsLogprobs, PolicyWorker)
    assert str(caught.value).startswith(EXPECTED)
    assert len(str(caught.value).splitlines()) == 1


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="protocol-subclass")
    yield cluster
    cluster.shutdown()


@pytest.mark.ray
def test_refused_before_anything_is_allocated(cluster: RayVirtualCluster) -> None:
    config: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    fqn = fqn_of(ForgetsLogprobs)
    config["worker_extension_cls_fqn"] = fqn
    before_config = copy.deepcopy(config)
    before = ray_resources_snapshot()
    actors, groups = named_actor_count(), live_placement_group_count()
    with pytest.raises(WorkerConfigError) as info:
        Policy(cluster, config, registry=fault_registry({fqn: DRIVER_ENV}))
    assert ray_resources_snapshot() == before
    assert (named_actor_count(), live_placement_group_count()) == (actors, groups)
    assert config == before_config
    (problem,) = info.value.problems
    assert problem.path == FIELD
    assert problem.given == fqn
    assert "PolicyWorker.get_logprobs: missing: only the abstract body" in problem.message
