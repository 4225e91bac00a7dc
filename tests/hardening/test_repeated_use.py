"""Repeated use in one Ray session: 50 refusals create nothing (Ray's record, dead actors and
removed placement groups included), each of 10 accepted start-and-shutdown cycles leaves no
live actor or placement group (checked after each cycle, while the cluster still exists),
and the driver's memory grows no more than a bound."""

from __future__ import annotations

import copy
import gc
import warnings
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config
from tests.ray.observed import allocates_nothing

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # ~10 real actor starts: about a minute

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
REFUSALS = 50
CYCLES = 10
# A leak worth catching grows with every cycle: a kept worker group, actor handle or
# placement group costs tens of KB to MBs each, a kept tiny model (~0.2M parameters,
# about 1 MB) or a torch/ModelOpt import in the driver far more. After the warm-up cycle
# the driver's own state is constant; 50 MB leaves room for the allocator's and Ray's
# caches (object refs, gRPC buffers) that settle over the first few cycles.
MAX_GROWTH_MB = 50.0


def rss_mb() -> float:
    """The driver's resident set size now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def refuse(cluster: RayVirtualCluster, section: dict[str, Any]) -> None:
    with allocates_nothing(), pytest.raises(WorkerConfigError):
        Policy(cluster, section, name_prefix="repeat_refused")


def cycle(
    cluster: RayVirtualCluster, section: dict[str, Any], live_before: tuple[int, int]
) -> None:
    """One start and shutdown; the cluster object lives on, so a leak shows here, not
    hidden by the cluster's own shutdown at the end."""
    policy = Policy(cluster, copy.deepcopy(section), name_prefix="repeat_ok")
    assert policy.world_size == 1
    assert ray_resources_snapshot() != live_before  # the measure sees the start
    policy.shutdown()
    assert ray_resources_snapshot() == live_before


def test_refusals_and_cycles_leave_nothing_behind(ray_cluster: None) -> None:
    mismatched: dict[str, Any] = load_config(CONFIGS / "mismatched_quant.yaml")["policy"]
    accepted: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    cluster = RayVirtualCluster([1], use_gpus=False, name="repeated")
    before = ray_resources_snapshot()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            refuse(cluster, mismatched)
            cycle(cluster, accepted, before)  # warm-up: first imports, first actor class export
            gc.collect()
            start_mb = rss_mb()
            for _ in range(REFUSALS):
                refuse(cluster, mismatched)
            for _ in range(CYCLES):
                cycle(cluster, accepted, before)
            gc.collect()
            growth = rss_mb() - start_mb
            print(f"driver RSS {start_mb:.1f} MB after warm-up, grew {growth:+.1f} MB")
        finally:
            cluster.shutdown()
    assert ray_resources_snapshot() == before
    assert growth < MAX_GROWTH_MB, f"driver RSS grew {growth:.1f} MB"
