"""A worker call's result has the Protocol method's return type: misusing it fails."""

from __future__ import annotations

from contracts import PolicyWorker, TrainBatch
from nemo_rl.distributed.worker_groups import RayWorkerGroup


def step(group: RayWorkerGroup[PolicyWorker], batch: TrainBatch) -> None:
    result = group.run_rank(0, PolicyWorker.train, batch)
    loss: str = result["loss"]  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # loss is a float
    result["loss"].upper()  # type: ignore[attr-defined]  # pyrefly: ignore[missing-attribute]  # not a str
    alive: list[str] = group.run_all(PolicyWorker.is_alive)  # type: ignore[call-overload]  # pyrefly: ignore[bad-assignment]  # list[bool]
    print(loss, alive)
