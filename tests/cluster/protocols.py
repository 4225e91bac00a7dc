"""The extension Protocol of the node-reporting test worker: what `where()` returns."""

from __future__ import annotations

from typing import Protocol

from contracts.protocols import PolicyWorker


class NodeReportingWorker(PolicyWorker, Protocol):
    def where(self) -> dict[str, str]: ...
