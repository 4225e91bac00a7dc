"""The data of the worker table: a row per (role, backend, mode), and the actor environment
its classes run in. Plain frozen dataclasses, imported by the built-in table and the
registry alike (the registry re-exports them).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class ActorEnvironment:
    """A Python environment worker actors run in. No executable: the driver's own."""

    name: str
    py_executable: str | None = None

    @property
    def is_driver(self) -> bool:
        return self.py_executable is None or self.py_executable == sys.executable

    @property
    def python(self) -> str:
        return self.py_executable if self.py_executable is not None else sys.executable


DRIVER_ENV = ActorEnvironment(name="driver")


@dataclass(frozen=True)
class WorkerRow:
    """One row of the worker table: (role, backend, mode) and its classes."""

    role: str
    backend: str
    mode: str | None
    default_fqn: str
    quantized_fqn: str | None
    protocol: str
    quant_protocol: str | None
    env: ActorEnvironment = DRIVER_ENV

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.role, self.backend, self.mode)

    @property
    def label(self) -> str:
        """Human name of the row, e.g. 'vLLM async mode' or 'megatron backend'."""
        if self.backend == "vllm" and self.mode is not None:
            return f"vLLM {self.mode} mode"
        if self.mode is not None:
            return f"{self.backend} backend, {self.mode} mode"
        return f"{self.backend} backend"
