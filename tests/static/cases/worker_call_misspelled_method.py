"""A misspelled worker method fails type checking, not inside an actor mid-training."""

from __future__ import annotations

from contracts import PolicyWorker
from nemo_rl.distributed.worker_groups import RayWorkerGroup


def save(group: RayWorkerGroup[PolicyWorker], path: str) -> None:
    group.run_all(PolicyWorker.save_checkpoint, path)
    group.run_all(PolicyWorker.save_chekpoint, path)  # type: ignore[attr-defined]  # pyrefly: ignore[missing-attribute]  # misspelled
