"""Worker classes for the multi-node tests: real Automodel policy workers that also say
where they run (node, rendezvous address), and one whose start is held on some ranks."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import ray
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker

# Ranks from this one on take this long to construct: a node can die under them meanwhile.
HELD_FROM_RANK = 2
HOLD_S = 120.0


class NodeReportingPolicyWorker(AutomodelPolicyWorker):
    def where(self) -> dict[str, str]:
        """The node this rank runs on, its rendezvous address and its interpreter."""
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_tag": os.environ.get("NEMO_TEST_NODE", ""),
            "master_addr": os.environ.get("MASTER_ADDR", ""),
            "master_port": os.environ.get("MASTER_PORT", ""),
            "python": sys.executable,
        }


class HeldStartPolicyWorker(AutomodelPolicyWorker):
    """Ranks >= HELD_FROM_RANK stay in their constructor (a slow model load)."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        if rank >= HELD_FROM_RANK:
            deadline = time.monotonic() + HOLD_S
            while time.monotonic() < deadline:
                time.sleep(0.2)
        super().__init__(config, rank=rank, world_size=world_size)
