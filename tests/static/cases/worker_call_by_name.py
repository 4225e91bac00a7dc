"""The by-name call is kept for old code only; each use is flagged as deprecated."""

from __future__ import annotations

from contracts import PolicyWorker
from nemo_rl.distributed.worker_groups import RayWorkerGroup


def old(group: RayWorkerGroup[PolicyWorker]) -> None:
    group.run_all("save_checkpoint", "ckpt")  # type: ignore[deprecated]  # pyrefly: ignore[deprecated]  # by name
    group.run_rank(0, "is_alive")  # type: ignore[deprecated]  # pyrefly: ignore[deprecated]  # by name
    group.run_sharded("train", [{"input_ids": [[1]]}])  # type: ignore[deprecated]  # pyrefly: ignore[deprecated]  # by name
