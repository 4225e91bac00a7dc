"""Worker rows and actor environments, built in and contributed by entry points.

A row says, for one role and backend/mode, which class runs by default, which runs
when quantized, and which Protocol each must satisfy. An actor environment says in
which Python interpreter a worker class lives; the verifier runs there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from typing_extensions import is_protocol

from nemo_rl_workers.model.protocols import extends, load_protocol, protocol_ref
from nemo_rl_workers.model.rows import DRIVER_ENV as DRIVER_ENV  # re-exported: its public home
from nemo_rl_workers.model.rows import ActorEnvironment as ActorEnvironment
from nemo_rl_workers.model.rows import WorkerRow as WorkerRow
from nemo_rl_workers.model.table import BUILTIN_ROWS
from nemo_rl_workers.reading import distributions
from nemo_rl_workers.reading.distributions import EntryPoint

ENTRY_POINT_GROUP = "nemo_rl.workers"


@dataclass(frozen=True)
class WorkerPlugin:
    """What an entry point of the `nemo_rl.workers` group contributes."""

    rows: tuple[WorkerRow, ...] = ()
    environments: Mapping[str, ActorEnvironment] = field(default_factory=dict)
    # Extension Protocols by worker FQN: the contract a class is verified against (and its
    # worker group can be narrowed to) instead of its role's. Each must extend a role's.
    protocols: Mapping[str, type] = field(default_factory=dict)


class RegistryError(ValueError):
    """A plugin contributed a row or an environment that clashes with another."""


class WorkerRegistry:
    """Rows by (role, backend, mode), and actor environments by worker FQN."""

    def __init__(
        self,
        rows: Iterable[WorkerRow],
        environments: Mapping[str, ActorEnvironment] | None = None,
    ) -> None:
        self._rows: dict[tuple[str, str, str | None], WorkerRow] = {}
        self._envs: dict[str, ActorEnvironment] = {}
        self._protocols: dict[str, type] = {}
        self._sources: dict[str, str] = {}  # worker FQN -> who registered its environment
        self.add(WorkerPlugin(tuple(rows), dict(environments or {})), source="built-in")

    def add(self, plugin: WorkerPlugin, *, source: str) -> None:
        """Add a plugin's rows, environments and Protocols; a clash names both sources.
        Protocols are checked first, so a refused one leaves the registry as it was."""
        for worker, protocol in plugin.protocols.items():
            self._check_protocol(worker, protocol, plugin, source)
        for row in plugin.rows:
            if row.key in self._rows:
                raise RegistryError(
                    f"{source} registers a second worker row for {row.role} {row.label}; "
                    f"it already runs {self._rows[row.key].default_fqn}."
                )
            self._rows[row.key] = row
            for fqn in (row.default_fqn, row.quantized_fqn):
                if fqn is not None:
                    self._envs.setdefault(fqn, row.env)
                    self._sources.setdefault(fqn, source)
        for fqn, env in plugin.environments.items():
            known = self._envs.get(fqn)
            if known is not None and known != env:
                raise RegistryError(
                    f"{source} registers {fqn} in environment {env.name!r}, "
                    f"but it is already registered in {known.name!r}."
                )
            self._envs[fqn] = env
            self._sources.setdefault(fqn, source)
        self._protocols.update(plugin.protocols)

    def _check_protocol(
        self, fqn: str, protocol: object, plugin: WorkerPlugin, source: str
    ) -> None:
        """An extension Protocol must be a Protocol extending a role's, for a class with an
        environment; anything else is refused here, before any config names the class."""
        rows = [*self._rows.values(), *plugin.rows]
        roles = {name: load_protocol(name)[0] for r in rows
                 for name in (r.protocol, r.quant_protocol) if name is not None}
        if not isinstance(protocol, type) or not is_protocol(protocol):
            raise RegistryError(
                f"{source} registers {protocol!r} as the Protocol of {fqn}, but it is not a "
                "typing.Protocol class."
            )
        ref = protocol_ref(protocol)
        if not any(role is not None and extends(protocol, role) for role in roles.values()):
            raise RegistryError(
                f"{source} registers Protocol {ref} for {fqn}, but it does not extend a role's "
                f"Protocol ({', '.join(roles)}); declare it as "
                f"`class {protocol.__name__}(<the role's Protocol>, Protocol)`."
            )
        row_fqns = {f for r in plugin.rows for f in (r.default_fqn, r.quantized_fqn)}
        if fqn not in self._envs and fqn not in plugin.environments and fqn not in row_fqns:
            raise RegistryError(
                f"{source} registers Protocol {ref} for {fqn}, which has no actor environment; "
                "register its environment in the same plugin."
            )
        known = self._protocols.get(fqn)
        if known is not None and known is not protocol:
            raise RegistryError(
                f"{source} registers Protocol {ref} for {fqn}, but it is already registered "
                f"with {protocol_ref(known)}."
            )

    def row(self, role: str, backend: str, mode: str | None = None) -> WorkerRow | None:
        return self._rows.get((role, backend, mode))

    def rows(self) -> tuple[WorkerRow, ...]:
        return tuple(self._rows.values())

    def backends(self, role: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.backend for r in self._rows.values() if r.role == role))

    def environment_of(self, fqn: str) -> ActorEnvironment | None:
        return self._envs.get(fqn)

    def protocol_of(self, fqn: str) -> type | None:
        """The extension Protocol registered for `fqn`, if any."""
        return self._protocols.get(fqn)

    def environments(self) -> Mapping[str, ActorEnvironment]:
        """Every registered worker FQN and its actor environment (read-only)."""
        return MappingProxyType(self._envs)

    def source_of(self, fqn: str) -> str | None:
        """Who registered `fqn`'s environment: 'built-in' or an entry point; None if nobody."""
        return self._sources.get(fqn)

    def owner_of(self, fqn: str) -> tuple[WorkerRow, bool] | None:
        """The row whose default (False) or quantized (True) class is `fqn`."""
        for row in self._rows.values():
            if row.default_fqn == fqn:
                return row, False
            if row.quantized_fqn == fqn:
                return row, True
        return None


def _load_plugin(entry_point: EntryPoint) -> WorkerPlugin:
    # A stale or broken registration (its package uninstalled, its module raising) is
    # the user's environment, not a bug here: one RegistryError naming it, never a crash.
    try:
        loaded: object = entry_point.load()
        if callable(loaded) and not isinstance(loaded, WorkerPlugin):
            factory: Callable[[], object] = loaded
            loaded = factory()
    except Exception as err:  # noqa: BLE001 - whatever the plugin's import or factory raises
        raise RegistryError(
            f"entry point {entry_point.name!r} ({entry_point.value}) of group "
            f"{ENTRY_POINT_GROUP!r} cannot be loaded: {type(err).__name__}: {err}; "
            "reinstall or uninstall the package that registers it."
        ) from None
    if not isinstance(loaded, WorkerPlugin):
        raise RegistryError(
            f"entry point {entry_point.name!r} ({entry_point.value}) of group "
            f"{ENTRY_POINT_GROUP!r} must be a WorkerPlugin or return one, "
            f"but gave {type(loaded).__name__}."
        )
    return loaded


def build_registry(*, entry_points: bool = True) -> WorkerRegistry:
    """The built-in table plus every installed `nemo_rl.workers` entry point."""
    registry = WorkerRegistry(BUILTIN_ROWS)
    if entry_points:
        for ep in sorted(distributions.entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name):
            registry.add(_load_plugin(ep), source=f"entry point {ep.name!r} ({ep.value})")
    return registry


@functools.cache
def default_registry() -> WorkerRegistry:
    """The process-wide registry, built once (entry points are read on first use)."""
    return build_registry()
