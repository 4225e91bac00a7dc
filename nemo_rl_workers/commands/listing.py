"""`nemo-rl-workers list`: what the registry knows, without importing any worker.

Rows come first (role, backend/mode, default and quantized class, their Protocols,
actor environment), then every registered extension: a class with an actor
environment that is no row's own worker, with its environment and who registered it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_UNUSABLE, verdict
from nemo_rl_workers.findings.report import table
from nemo_rl_workers.findings.reporter import Reporter

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision
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


def tree_listing_json(revision: Revision) -> dict[str, Any]:
    return {
        "nemo_rl": revision.as_json(),
        "rows": [
            {
                "role": row.role,
                "driver": row.driver,
                "switches": row.switches,
                "default": row.default_fqn,
                "quantized": row.quantized_fqn,
                "env": revision.environments.get(row.default_fqn),
                "quantized_env": (revision.environments.get(row.quantized_fqn)
                                  if row.quantized_fqn else None),
                "py_executable": revision.py_executables.get(row.default_fqn),
                "clears": list(revision.clears.get(row.driver, ())),
                "builds": revision.builds.get(row.driver),
                "where": row.where,
            }
            for row in revision.rows
        ],
        "defaults": dict(revision.defaults),
        "environments": dict(revision.environments),
        "calls": {driver: list(methods) for driver, methods in revision.calls.items()},
    }


def render_tree_listing(revision: Revision) -> str:
    """The tree's table: every role and driver, the switches that select each class, its
    quantized counterpart and both environments; then how the tree reads its config."""
    header = ["role", "driver", "switches", "worker", "env", "quantized", "quantized env"]
    rows = [
        [row.role, row.driver, row.switches, row.default_fqn,
         revision.env_of(row.default_fqn),
         row.quantized_fqn or _no_quantized(revision, row.driver),
         revision.env_of(row.quantized_fqn) if row.quantized_fqn else "-"]
        for row in revision.rows
    ]
    out = ["worker rows", *("  " + line for line in table(rows, header))]
    out.append("")
    defaults = ", ".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(
        revision.defaults.items())) or "none"
    out.append(f"switch defaults (a config that leaves one out): {defaults}")
    out.append(f"worker_extension_cls_fqn: read from the {revision.extension_field}"
               if revision.extension_field != "not read"
               else "worker_extension_cls_fqn: not read")
    out.extend(f"{driver} starts its workers through the classes it builds: {chain}"
               for driver, chain in sorted(revision.builds.items()))
    out.append(f"actor-environment registry: {len(revision.environments)} classes")
    pinned = revision.vllm_pin or (
        f"undecided ({revision.project_problem})" if revision.project_problem else "none")
    out.append(f"vLLM pinned: {pinned}")
    out.extend(f"undecided: {reason}" for reason in revision.undecided)
    out.extend(f"undecided: this table may lack rows: {line}" for line in revision.unread)
    out.extend(f"undecided: the registry may lack classes: {line}"
               for line in revision.registry_problems)
    out.extend(f"undecided: {fqn} cannot be modelled: {why}"
               for fqn, why in sorted(revision.class_problems.items()))
    return "\n".join(out)


def _no_quantized(revision: Revision, driver: str) -> str:
    """Why a row has no quantized class: none in the override maps, or the driver clears
    `quant_cfg` on its own copy of the config before building."""
    from nemo_rl_workers.tree.knowledge import QUANT_KEY

    if QUANT_KEY in revision.clears.get(driver, ()):
        return f"- ({driver} clears {QUANT_KEY})"
    return "-"


def run_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The `list` command: 0, or 2 with one line when an entry point is broken or
    `--nemo-rl` names no tree. A tree other than the reference prints its own table."""
    from nemo_rl_workers.model.registry import RegistryError, default_registry
    from nemo_rl_workers.tree.checkout import UnusableCheckout, find_checkout
    from nemo_rl_workers.tree.revisions import Revisions

    say = Reporter(out, err)
    as_json: bool = args.json
    revisions = Revisions(args, err)
    try:
        found = revisions(find_checkout(args.nemo_rl, (), args.reference))
        revisions.say_notes()
        if found is None:
            return EXIT_UNUSABLE
        revision = found
        listing = worker_listing(default_registry())
    except (RegistryError, UnusableCheckout) as bad:
        return say.unusable(str(bad))  # one line: a path may hold a newline
    if not revision.is_reference:
        if as_json:
            say.json(tree_listing_json(revision))
        else:
            say.line(f"NeMo-RL: {revision.label()}\n{render_tree_listing(revision)}")
        # A table the source could not decide whole is not a listing to rely on.
        return verdict(bool(revision.unread or revision.class_problems
                            or revision.registry_problems))
    if as_json:
        say.json({"nemo_rl": revision.as_json(), **listing_json(listing)})
    else:
        say.line(f"NeMo-RL: {revision.label()}\n{render_listing(listing)}")
    return EXIT_OK
