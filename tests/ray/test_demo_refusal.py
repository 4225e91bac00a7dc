"""The demo's refusal step (step 4 of `make run`), without the CLI: judged by Ray's record."""

from __future__ import annotations

import pytest
from nemo_rl.demo import CONFIGS, refused_before_allocation
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster

from tests.ray.observed import allocates_nothing, control_start_is_seen

pytestmark = pytest.mark.ray


def test_demo_refusal_step_creates_nothing(
    ray_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with allocates_nothing():
        assert refused_before_allocation(CONFIGS / "mismatched_quant.yaml", [2])
    out = capsys.readouterr().out
    assert "WorkerConfigError [R5] policy.worker_extension_cls_fqn" in out
    assert "created on Ray by the refusal (its record, dead and removed included): " \
           "0 actor(s), 0 placement group(s)\n" in out
    control_start_is_seen(RayVirtualCluster([2], use_gpus=False, name="demo-control"))

