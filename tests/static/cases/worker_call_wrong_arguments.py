"""A worker call is checked against the Protocol method's parameters: wrong type, missing
argument, extra argument, and the same through the sharded and the single-rank calls."""

from __future__ import annotations

from contracts import PolicyWorker, TrainBatch
from nemo_rl.distributed.worker_groups import RayWorkerGroup


def calls(group: RayWorkerGroup[PolicyWorker], batches: list[TrainBatch]) -> None:
    group.run_all(PolicyWorker.save_checkpoint, 3)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # wrong type: path is a str
    group.run_all(PolicyWorker.save_checkpoint)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # missing path
    group.run_all(PolicyWorker.save_checkpoint, "ckpt", 7)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # extra argument
    group.run_all(PolicyWorker.save_checkpoint, "ckpt", step=7)  # type: ignore[call-arg, arg-type]  # pyrefly: ignore[no-matching-overload]  # extra keyword
    group.run_sharded(PolicyWorker.train, ["not a batch"])  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # shards of the wrong type
    group.run_rank(0, PolicyWorker.get_logprobs, batches[0], True)  # type: ignore[call-overload]  # pyrefly: ignore[no-matching-overload]  # extra argument
