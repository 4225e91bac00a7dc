"""Policy workers that fault on purpose during a call: injected faults, named as such.

No torch: each actor is a light process, so groups of four fit a loaded 2-core machine.
The fault is set in the section (`fault:`), so it travels the way a real config does:

    fault: {kind: raise, ranks: [1], on_call: 1, seconds: 2}

`kind`: raise (InjectedFault), exit (os._exit(3)), kill (the actor `ray.kill`s itself),
hang (sleeps an hour), slow (sleeps `seconds`, then answers). `on_call`: which `train`
call faults (1 = the first). With `barrier_s`, the ranks that do not fault wait in an
injected barrier for that long (reported as a collective, like the data-parallel
all-reduce) and then give up with a DataParallelError, as a real rank's collective
timeout would.
"""

from __future__ import annotations

import os
import time
from typing import Any

from nemo_rl.distributed.presence import waiting_for_peers
from nemo_rl.distributed.rendezvous import DataParallelError

from contracts.types import TrainBatch, TrainResult
from tests.ray.light_workers import LightPolicyWorker

BARRIER = "the injected barrier"
HANG_S = 3600.0


class InjectedFault(RuntimeError):
    """The error CallFaultWorker raises on its faulty ranks."""


class CallFaultWorker(LightPolicyWorker):
    """A PolicyWorker whose `train` faults on the configured ranks and call."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        super().__init__(config, rank=rank, world_size=world_size)
        fault: dict[str, Any] = dict(config.get("fault") or {})
        self.kind = str(fault.get("kind", "raise"))
        self.faulty_ranks = [int(r) for r in fault.get("ranks", [1])]
        self.on_call = int(fault.get("on_call", 1))
        self.seconds = float(fault.get("seconds", 1.0))
        barrier = fault.get("barrier_s")
        self.barrier_s = None if barrier is None else float(barrier)
        self.calls = 0

    def train(self, batch: TrainBatch) -> TrainResult:
        self.calls += 1
        if self.calls == self.on_call and self.rank in self.faulty_ranks:
            self._fault()
        elif self.calls == self.on_call and self.barrier_s is not None:
            with waiting_for_peers(BARRIER):
                time.sleep(self.barrier_s)
            raise DataParallelError(
                f"rank {self.rank}: its peers did not reach {BARRIER} within "
                f"{self.barrier_s:g}s", waited_in=BARRIER, gave_up_after_s=self.barrier_s)
        return TrainResult(loss=0.0, grad_norm=0.0, num_tokens=0, step=self.calls)

    def _fault(self) -> None:
        if self.kind == "raise":
            raise InjectedFault(f"injected fault: rank {self.rank} raises")
        if self.kind == "exit":
            os._exit(3)
        if self.kind == "kill":
            import ray

            ray.kill(ray.get_runtime_context().current_actor)
            time.sleep(HANG_S)  # the kill ends this process
        if self.kind == "hang":
            time.sleep(HANG_S)
        if self.kind == "slow":
            time.sleep(self.seconds)


def fqn_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


FAULT_FQN = fqn_of(CallFaultWorker)
