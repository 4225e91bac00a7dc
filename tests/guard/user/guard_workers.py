"""The user's own worker classes, for guarded runs of upstream's worker groups (imported by
upstream's initializer actors by FQN, from this folder on PYTHONPATH; never by the test
process)."""

import os
import sys

import ray


@ray.remote(num_cpus=0)
class EchoWorker:
    """A good actor class: starts, answers, and raises on rank 1 when asked."""

    def __init__(self) -> None:
        self.rank = int(os.environ.get("RANK", "0"))

    def echo(self, value: int) -> tuple[int, int]:
        return self.rank, value

    def armed(self) -> bool:
        """Whether this worker's interpreter armed the guard (the driver's environment)."""
        return any(type(f).__name__ == "_Trigger" for f in sys.meta_path) \
            or "nemo_rl_workers.guard.hooks" in sys.modules

    def boom(self) -> int:
        if self.rank == 1:
            raise ValueError(f"boom on rank {self.rank}")
        return self.rank


class PlainWorker:
    """Not an actor class: no @ray.remote."""

    def echo(self, value: int) -> int:
        return value


@ray.remote(num_cpus=0)
class PingWorker:
    """Serves every call the fork's EchoDriver makes (echo, ping)."""

    def echo(self, value: int) -> int:
        return value

    def ping(self) -> str:
        return "pong"


@ray.remote(num_cpus=0)
class StrEchoWorker:
    """Takes every call the fork's EchoDriver makes, but `echo` takes a str where the
    revision's Protocol (its default worker's signature) passes an int."""

    def echo(self, value: str) -> str:
        return value

    def ping(self) -> str:
        return "pong"
