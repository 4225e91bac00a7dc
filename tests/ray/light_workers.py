"""A light policy worker: no torch, no model; many of its actors fit a 2-CPU machine.

It implements PolicyWorker with trivial bodies, so a group of it starts in a second and
counts exactly what a worker group start does (verification, placement groups, actors).
"""

from __future__ import annotations

from typing import Any

from contracts.types import LogprobBatch, LogprobResult, TrainBatch, TrainResult


class LightPolicyWorker:
    """Every PolicyWorker method, doing nothing heavy; remembers its rank."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        self.rank = rank
        self.world_size = world_size

    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return TrainResult(loss=0.0, grad_norm=0.0, num_tokens=0, step=0)

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return LogprobResult(logprobs=[])

    def save_checkpoint(self, path: str) -> None:
        return None

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True
