"""The extension's contract: what the trainer may call on its workers, beyond PolicyWorker.

Import-light (only `contracts`): the driver reads it while resolving configs, through the
entry point in `registration.py`, without importing torch or the worker itself.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from contracts.protocols import PolicyWorker


@runtime_checkable
class WeightNormWorker(PolicyWorker, Protocol):
    """A policy worker that also reports the L2 norm of its weights."""

    def get_weight_norm(self) -> float: ...
