"""Allocation observed from Ray's own state, with a positive control.

Live counts cannot tell "allocated nothing" from "allocated, then tore it all down";
`ray_record()` can: Ray's control store keeps dead actors and removed placement groups.
`allocates_nothing` asserts that nothing was ever created while its block ran;
`control_start_is_seen` shows, in the same test, that the measure does see a real start
(one light actor on the same cluster, torn down before the record is read).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
from nemo_rl.distributed.inventory import ray_record, ray_resources_snapshot
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup

from contracts.protocols import PolicyWorker
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import DRIVER_ENV
from tests.ray.light_workers import LightPolicyWorker

LIGHT_FQN = f"{LightPolicyWorker.__module__}.{LightPolicyWorker.__qualname__}"


def light_builder() -> RayWorkerBuilder:
    """A builder for LightPolicyWorker, verified against PolicyWorker like any worker."""
    return RayWorkerBuilder(fqn=LIGHT_FQN, env=DRIVER_ENV, config={}, protocol="PolicyWorker")


@contextmanager
def allocates_nothing() -> Generator[None]:
    """The block creates no actor and no placement group, not even briefly."""
    before = ray_record()
    yield
    created = ray_record().since(before)
    assert created.empty, f"created before refusing: {created.describe()}"


def control_start_is_seen(cluster: RayVirtualCluster) -> None:
    """Positive control: a real start of one light actor on `cluster`, torn down again, is
    seen by the record (and gone from the live counts)."""
    live_before = ray_resources_snapshot()
    before = ray_record()
    group = RayWorkerGroup(cluster, light_builder(), protocol=PolicyWorker,
                           name_prefix="control", num_workers=1)
    group.shutdown()
    cluster.shutdown()
    created = ray_record().since(before)
    assert [d.split()[:2] for d in created.actors.values()] == [["WorkerHost", "'control-0'"]]
    assert len(created.placement_groups) == len(cluster.bundle_ct_per_node_list)
    assert ray_resources_snapshot() == live_before  # what the old live counts could see


def refused_cleanly(
    make: Callable[[], object], config: Mapping[str, Any], cluster: RayVirtualCluster
) -> WorkerConfigError:
    """Run `make`, which must raise WorkerConfigError having created nothing on Ray, ever,
    and left `config` as it was; then the positive control on `cluster`."""
    config_before = copy.deepcopy(config)
    with allocates_nothing(), pytest.raises(WorkerConfigError) as info:
        make()
    assert config == config_before
    control_start_is_seen(cluster)
    return info.value
