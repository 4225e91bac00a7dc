"""`nemo-rl-workers list`: what the registry knows, without importing any worker.

Rows come first (role, backend/mode, default and quantized class, their Protocols,
actor environment), then every registered extension: a class with an actor
environment that is no row's own worker, with its environment and who registered it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TextIO

from nemo_rl_workers.findings.report import table
from nemo_rl_workers.model.protocols import protocol_ref
from nemo_rl_workers.model.registry import WorkerRegistry, WorkerRow


@dataclass(frozen=True)
class ListedExtension:
    """A registered class that no row runs by default or quantized."""

    fqn: str
    env: str
    python: str | None  # None: the driver's interpreter
    source: str
    # The Protocol the extension declares; None until extension Protocols are registered.
    protocol: str | None = None


@dataclass(frozen=True)
class WorkerListing:
    rows: tuple[WorkerRow, ...]
    extensions: tuple[ListedExtension, ...]


def worker_listing(registry: WorkerRegistry) -> WorkerListing:
    """The registry's rows, and its extensions sorted by FQN."""
    extensions = [
        ListedExtension(
            fqn=fqn,
            env=env.name,
            python=env.py_executable,
            source=registry.source_of(fqn) or "unknown",
            protocol=extension_protocol(registry, fqn),
        )
        for fqn, env in registry.environments().items()
        if registry.owner_of(fqn) is None
    ]
    return WorkerListing(registry.rows(), tuple(sorted(extensions, key=lambda e: e.fqn)))


def extension_protocol(registry: WorkerRegistry, fqn: str) -> str | None:
    """The FQN of the Protocol an extension registered with its class, if any."""
    protocol = registry.protocol_of(fqn)
    return None if protocol is None else protocol_ref(protocol)


def _mode(row: WorkerRow) -> str:
    return row.backend + (f"/{row.mode}" if row.mode else "")


def listing_json(listing: WorkerListing) -> dict[str, Any]:
    return {
        "rows": [
            {
                "role": row.role,
                "backend": row.backend,
                "mode": row.mode,
                "default": row.default_fqn,
                "quantized": row.quantized_fqn,
                "protocol": row.protocol,
                "quant_protocol": row.quant_protocol,
                "env": row.env.name,
            }
            for row in listing.rows
        ],
        "extensions": [
            {
                "fqn": ext.fqn,
                "env": ext.env,
                "python": ext.python,
                "source": ext.source,
                "protocol": ext.protocol,
            }
            for ext in listing.extensions
        ],
    }


def render_listing(listing: WorkerListing) -> str:
    """Two aligned tables: the rows, then the registered extensions."""
    header = ["role", "backend", "protocol", "quant protocol", "env", "default", "quantized"]
    rows = [
        [
            row.role,
            _mode(row),
            row.protocol,
            row.quant_protocol or "-",
            row.env.name,
            row.default_fqn,
            row.quantized_fqn or "-",
        ]
        for row in listing.rows
    ]
    out = ["worker rows", *("  " + line for line in table(rows, header))]
    out.append("")
    if not listing.extensions:
        out.append("registered extensions: none (register one through the 'nemo_rl.workers' "
                   "entry-point group)")
        return "\n".join(out)
    ext_header = ["extension", "protocol", "env", "registered by"]
    ext_rows = [
        [ext.fqn, ext.protocol or "-", ext.env, ext.source] for ext in listing.extensions
    ]
    out.append("registered extensions")
    out.extend("  " + line for line in table(ext_rows, ext_header))
    return "\n".join(out)


def run_list(as_json: bool, out: TextIO, err: TextIO) -> int:
    """The `list` command: 0, or 2 with one line when an entry point is broken."""
    from nemo_rl_workers.model.registry import RegistryError, default_registry

    try:
        listing = worker_listing(default_registry())
    except RegistryError as bad:
        print(f"nemo-rl-workers: {bad}", file=err)
        return 2
    if as_json:
        json.dump(listing_json(listing), out, indent=2)
        out.write("\n")
    else:
        print(render_listing(listing), file=out)
    return 0
