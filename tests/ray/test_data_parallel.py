"""Data parallelism: the ranks of a Policy average their gradients every step, so they
stay identical and train exactly as one worker on the whole batch would."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
import torch
from nemo_rl.distributed.data_parallel import DataParallelError, DataParallelGroup
from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.rendezvous import MASTER_ADDR_ENV, MASTER_PORT_ENV, TIMEOUT_ENV
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import WorkerCallError
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker
from ray.exceptions import RayTaskError

from contracts.protocols import PolicyWorker
from contracts.types import TrainBatch, TrainResult
from nemo_rl_workers.model.registry import DRIVER_ENV
from nemo_rl_workers.reading.loader import load_config
from tests.ray.dp_fault_workers import HANGING_FQN
from tests.ray.fault_workers import fault_registry

pytestmark = pytest.mark.ray

CONFIG = Path(__file__).resolve().parents[2] / "examples" / "configs" / "grpo_tiny.yaml"
PROBE = [[5, 6, 7, 8, 9, 10], [11, 12, 13], [1, 2, 3, 4]]
# float32 sums in another order (per-shard padding, gradients summed over ranks).
ATOL = 1e-5


@dataclass
class Pair:
    """A 2-rank Policy and an in-process single worker, always trained on the same batches."""

    policy: Policy
    single: AutomodelPolicyWorker

    def train(self, batch: TrainBatch) -> tuple[TrainResult, TrainResult]:
        return self.policy.train(batch), self.single.train(batch)

    def rank_logprobs(self) -> list[list[list[float]]]:
        """Each rank's log-probabilities of the whole PROBE batch."""
        group = self.policy.worker_group
        results = [
            group.run_rank(rank, PolicyWorker.get_logprobs, {"input_ids": PROBE})
            for rank in range(self.policy.world_size)
        ]
        return [r["logprobs"] for r in results]


@pytest.fixture(scope="module")
def pair(ray_cluster: None) -> Iterator[Pair]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="data_parallel")
    section: dict[str, Any] = load_config(CONFIG)["policy"]
    policy = Policy(cluster, section, name_prefix="dp_policy")
    try:
        assert policy.fqn.endswith(".AutomodelPolicyWorker")
        single = AutomodelPolicyWorker(policy.config(), rank=0, world_size=1)
        yield Pair(policy, single)
    finally:
        policy.shutdown()
        cluster.shutdown()


def assert_replicas_match_single_worker(pair: Pair) -> None:
    ranks = pair.rank_logprobs()
    assert ranks[0] == ranks[1]  # bit-identical replicas
    single = pair.single.get_logprobs({"input_ids": PROBE})["logprobs"]
    for got, want in zip(ranks[0], single, strict=True):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), atol=ATOL, rtol=0)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([[1, 2, 3, 4, 5], [3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [1, 1, 2]], id="even"),
        pytest.param([[1, 2, 3, 4, 5, 6, 7], [3, 4], [9, 10, 11]], id="uneven-3-rows"),
        pytest.param([[4, 5, 6, 7, 8]], id="one-row-empty-shard"),
    ],
)
def test_ranks_stay_identical_and_equal_one_worker_on_the_whole_batch(
    pair: Pair, rows: list[list[int]]
) -> None:
    before = pair.rank_logprobs()
    for _ in range(2):
        got, want = pair.train({"input_ids": rows})
        assert got["num_tokens"] == want["num_tokens"] == sum(len(r) - 1 for r in rows)
        assert got["loss"] == pytest.approx(want["loss"], abs=ATOL)
        assert got["grad_norm"] == pytest.approx(want["grad_norm"], rel=1e-4)
        assert got["step"] == want["step"]
    assert pair.rank_logprobs() != before  # the steps did move the weights
    assert_replicas_match_single_worker(pair)


def test_loss_mask_counts_only_masked_tokens_across_ranks(pair: Pair) -> None:
    batch: TrainBatch = {
        "input_ids": [[1, 2, 3, 4, 5], [6, 7, 8], [9, 10, 11, 12]],
        "loss_mask": [[0, 0, 1, 1, 1], [0, 0, 0], [0, 1, 1, 1]],
    }
    got, want = pair.train(batch)
    assert got["num_tokens"] == want["num_tokens"] == 6
    assert got["loss"] == pytest.approx(want["loss"], abs=ATOL)
    assert_replicas_match_single_worker(pair)


def test_a_bad_shard_fails_every_rank_at_once_and_no_rank_steps(pair: Pair) -> None:
    group = pair.policy.worker_group
    before = pair.rank_logprobs()
    step = pair.single.step
    good: TrainBatch = {"input_ids": [[1, 2, 3]]}
    bad: TrainBatch = {"input_ids": [[1, 2, 3]], "loss_mask": [[1, 1]]}  # wrong length
    refs = [w.call.remote("train", s) for w, s in zip(group.workers, [good, bad], strict=True)]
    ready, _ = ray.wait(refs, num_returns=2, timeout=30)  # no rank waits out a timeout
    assert len(ready) == 2
    with pytest.raises(RayTaskError) as rank0:
        ray.get(refs[0])
    with pytest.raises(RayTaskError) as rank1:
        ray.get(refs[1])
    assert isinstance(rank0.value.cause, DataParallelError)
    assert "another data-parallel rank failed step" in str(rank0.value)
    assert isinstance(rank1.value.cause, ValueError)
    assert "batch.loss_mask must have one entry per token" in str(rank1.value)
    assert pair.rank_logprobs() == before
    # The group is intact: the next step works on every rank and keeps them in step.
    got, want = pair.train({"input_ids": [[2, 3, 4, 5], [6, 7, 8]]})
    assert got["step"] == want["step"] == step + 1
    assert_replicas_match_single_worker(pair)


def test_an_empty_batch_is_rejected_before_any_rank_runs(pair: Pair) -> None:
    with pytest.raises(ValueError, match="train batch has no rows"):
        pair.policy.train({"input_ids": []})


@pytest.mark.slow  # starts its own 2-rank Policy and waits out a 2 s timeout: ~12 s
def test_a_rank_stepping_alone_fails_after_the_configured_timeout(
    ray_cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver's NEMO_RL_DIST_TIMEOUT_S reaches the actors; a step no peer joins ends.
    monkeypatch.setenv(TIMEOUT_ENV, "2")
    cluster = RayVirtualCluster([2], use_gpus=False, name="dp_timeout")
    section: dict[str, Any] = load_config(CONFIG)["policy"]
    policy = Policy(cluster, section, name_prefix="dp_timeout")
    try:
        start = time.monotonic()
        with pytest.raises(WorkerCallError) as info:
            policy.worker_group.run_rank(0, PolicyWorker.train, {"input_ids": [[1, 2, 3]]})
        assert time.monotonic() - start < 20
        # Rank 1 was not called: rank 0's own give-up is all there is to report.
        assert str(info.value).startswith(f"train failed on rank 0 of 2 ({policy.fqn} on node ")
        assert isinstance(info.value.__cause__, DataParallelError)
        assert "rank 0 of 2" in str(info.value.__cause__)
        assert "did not join the step within 2s" in str(info.value.__cause__)
    finally:
        policy.shutdown()
        cluster.shutdown()


@pytest.mark.slow  # starts its own 2-rank Policy, waits out a 2 s timeout and a settle: ~15 s
def test_a_hung_rank_is_named_when_its_peer_gives_up_in_the_rendezvous(
    ray_cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No call timeout: rank 0's rendezvous timeout ends the step, and the sentence names
    # rank 1, which hangs, not rank 0, which waited for it.
    monkeypatch.setenv(TIMEOUT_ENV, "2")
    cluster = RayVirtualCluster([2], use_gpus=False, name="dp_hang")
    section: dict[str, Any] = load_config(CONFIG)["policy"]
    section["worker_extension_cls_fqn"] = HANGING_FQN
    registry = fault_registry({HANGING_FQN: DRIVER_ENV})
    before = ray_record()
    policy = Policy(cluster, section, name_prefix="dp_hang", registry=registry)
    try:
        assert policy.worker_group.call_timeout_s is None
        start = time.monotonic()
        with pytest.raises(WorkerCallError) as info:
            policy.train({"input_ids": [[1, 2, 3], [4, 5, 6]]})
        assert time.monotonic() - start < 30
        node = ray.get_runtime_context().get_node_id()[:8]
        assert str(info.value) == (
            f"train hung on rank 1 of 2 ({HANGING_FQN} on node {node}…): rank 0 gave up "
            "waiting for it in the data-parallel rendezvous after 2 s"
        )
        assert (info.value.kind, info.value.ranks) == ("hung", (1,))
    finally:
        start = time.monotonic()
        policy.shutdown()
        cluster.shutdown()
        assert time.monotonic() - start <= 10
    created = ray_record().since(before)
    assert all(d.endswith(" DEAD") for d in created.actors.values()), created.describe()
    assert all(d.endswith(" REMOVED") for d in created.placement_groups.values())


@pytest.mark.slow  # starts its own 2-rank Policy and waits out a 3 s call timeout: ~15 s
def test_with_a_call_timeout_the_rank_blocked_in_the_rendezvous_is_told_from_the_hung_one(
    ray_cluster: None,
) -> None:
    # policy.call_timeout_s (3 s) expires first; rank 0 reported waiting in the real
    # data-parallel rendezvous (presence), rank 1 reported nothing: it is the hung one.
    cluster = RayVirtualCluster([2], use_gpus=False, name="dp_call_timeout")
    section: dict[str, Any] = load_config(CONFIG)["policy"]
    section["worker_extension_cls_fqn"] = HANGING_FQN
    section["call_timeout_s"] = 3
    before = ray_record()
    policy = Policy(cluster, section, name_prefix="dp_call_timeout",
                    registry=fault_registry({HANGING_FQN: DRIVER_ENV}))
    try:
        assert policy.worker_group.call_timeout_s == 3.0
        with pytest.raises(WorkerCallError) as info:
            policy.train({"input_ids": [[1, 2, 3], [4, 5, 6]]})
        node = ray.get_runtime_context().get_node_id()[:8]
        assert str(info.value) == (
            f"train hung on rank 1 of 2 ({HANGING_FQN} on node {node}…): no answer within 3 s "
            "(call_timeout_s); rank 0 is blocked in the data-parallel rendezvous waiting for it"
        )
        assert [o.state for o in info.value.outcomes] == ["blocked", "hung"]
    finally:
        start = time.monotonic()
        policy.shutdown()
        cluster.shutdown()
        assert time.monotonic() - start <= 10
    created = ray_record().since(before)
    assert all(d.endswith(" DEAD") for d in created.actors.values()), created.describe()
    assert all(d.endswith(" REMOVED") for d in created.placement_groups.values())


@pytest.mark.parametrize(
    ("world_size", "environ", "alone"),
    [
        (1, {MASTER_ADDR_ENV: "127.0.0.1", MASTER_PORT_ENV: "29500"}, True),
        (2, {}, True),  # constructed in-process, without a worker group
        (2, {MASTER_ADDR_ENV: "127.0.0.1", MASTER_PORT_ENV: "29500"}, False),
    ],
)
def test_only_a_rendezvous_address_and_peers_make_a_data_parallel_group(
    world_size: int, environ: dict[str, str], alone: bool
) -> None:
    group = DataParallelGroup.from_env(rank=0, world_size=world_size, environ=environ)
    assert (group is None) is alone
    if group is not None:
        assert group.init_method == "tcp://127.0.0.1:29500"
        assert group.timeout_s == 60.0
