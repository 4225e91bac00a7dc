"""A data-parallel policy worker whose rank 1 hangs on purpose before its first step joins
the gradient all-reduce (an injected fault; imports torch, like the real workers)."""

from __future__ import annotations

import time

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker

from contracts.types import TrainBatch, TrainResult

HANG_S = 3600.0


class HangingRankWorker(AutomodelPolicyWorker):
    """The reference Automodel worker, except that rank 1's first `train` never returns."""

    def train(self, batch: TrainBatch) -> TrainResult:
        if self.rank == 1 and self.step == 0:
            time.sleep(HANG_S)
        return super().train(batch)


HANGING_FQN = f"{HangingRankWorker.__module__}.{HangingRankWorker.__qualname__}"
