"""One read of a tree as the rules after the driver side's see it (the extension side,
the emitted Protocols): what `audit` built, handed on, so nothing is parsed again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.tree.drivers import Driver, DriverSide, WorkerChoice
from nemo_rl_workers.tree.source import Resolver, SourceTree


@dataclass(frozen=True)
class AuditContext:
    """One read of a tree, as the rules that follow the driver side's see it (the
    extension side: nemo_rl_workers.checks.audit.extensions)."""

    root: Path
    tree: SourceTree
    resolver: Resolver
    side: DriverSide
    choices: dict[str, tuple[Driver | None, list[WorkerChoice]]]
    # The strings the drivers' calls of a worker method send as one of its parameters
    # (`DriverReader.sent`): a name a worker passes on to `collective_rpc`.
    sent: Callable[[str, str, int | None, str], set[str] | None] | None = None
