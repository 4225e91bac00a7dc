"""The model of one NeMo-RL revision, which every command judges against: the data.

Built once from a tree's source (`revision_build`: the same one-pass source model and
driver reader the audit uses; nothing is imported), kept on disk by the content of every
file it read (`stage.REVISION`), opened for a command by `stage.revision_of`: its schema
generation (`dtensor_cfg` with `_v2`, or `automodel_cfg`), where it reads
`worker_extension_cls_fqn` (the config, the constructor, both), its worker table for
every role (the config switches that select each class, their defaults as the tree
applies them, and each class's quantized counterpart from its override maps), its
actor-environment registry, what its drivers call on each role's workers, the vLLM
version it pins, and what it could not read or model.

The reference revision (upstream after PR #4176, which this project's runtime
implements) is the same model made from the built-in table. A tree whose drivers select
their workers through `nemo_rl_workers` (this repository's runtime, or a fork built on
it) has the reference's table: it is judged as the reference. What the model cannot
decide is listed in `undecided`, with the reason; it is never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nemo_rl_workers.cache.codec import NOT_STORED
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.tree.cluster_builds import ClusterBuild
from nemo_rl_workers.tree.conditions import Condition, describe
from nemo_rl_workers.tree.entry_builds import EntryBuild

NEW_SCHEMA = "automodel_cfg"
OLD_SCHEMA = "dtensor_cfg"
REFERENCE_NAME = "reference: upstream NeMo-RL after PR #4176"


@dataclass(frozen=True)
class TreeRow:
    """One worker class a driver of the revision starts, and the switches that select it."""

    role: str  # "policy", "generation", "value", "teacher", or the driver's own name
    driver: str  # the driver class's name, e.g. "Policy", "VllmGeneration"
    condition: Condition
    default_fqn: str
    quantized_fqn: str | None
    where: str | None = None  # file:line where the driver names the class

    @property
    def switches(self) -> str:
        return describe(self.condition) or "always"


@dataclass(frozen=True)
class Revision:
    """A NeMo-RL revision as a command judges it (see the module docstring)."""

    name: str  # REFERENCE_NAME, or the tree's folder
    root: str | None
    how: str  # why this revision: "--nemo-rl", "the config's checkout", ...
    commit: str | None
    schema: str  # NEW_SCHEMA, OLD_SCHEMA or "undecided"
    has_v2: bool  # the tree reads `<schema>._v2`
    extension_field: str  # "config", "constructor", "config and constructor", "not read"
    rows: tuple[TreeRow, ...]
    environments: Mapping[str, str]  # actor class FQN -> environment, as the tree names it
    defaults: Mapping[str, bool]  # switch -> its value when the config does not set it
    vllm_pin: str | None
    calls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # driver -> methods
    # Every driver class -> its role, those that start no worker class of their own too.
    drivers: Mapping[str, str] = field(default_factory=dict)
    # Every driver class's name -> its FQN, for the rules read from its constructor.
    driver_fqns: Mapping[str, str] = field(default_factory=dict)
    # Driver -> where its constructor takes `worker_extension_cls_fqn` as a parameter
    # (file:line); a driver not listed takes none.
    extension_params: Mapping[str, str] = field(default_factory=dict)
    # Driver -> the classes it builds on the way to the one that starts its workers
    # ("ManagedDynamoRuntime (file:line), FixedDynamoWorkerPool (file:line)"), for a
    # driver that starts none itself (`tree.delegated_drivers`).
    builds: Mapping[str, str] = field(default_factory=dict)
    # Algorithm module with a `setup` -> the top-level keys its entry config requires
    # (None: it declares none the model reads): which setup a recipe runs.
    setups: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    # The drivers each entry's `setup` builds on a block of its config (`entry_builds`):
    # the evaluation's generation driver on `generation:`, with no policy.
    entry_builds: tuple[EntryBuild, ...] = ()
    # The clusters each entry's `setup` builds, with their bundle arithmetic as written:
    # the world size the tree computes for a config (`checks/config/tree_world_size`).
    cluster_builds: tuple[ClusterBuild, ...] = ()
    # Actor class -> the Python environment its start names itself (`.options(runtime_env=
    # {"py_executable": X})`, `@ray.remote(runtime_env=...)`), for classes the registry
    # may not hold: they run in that environment, registered or not.
    py_executables: Mapping[str, str] = field(default_factory=dict)
    # Driver -> the config keys its constructor clears on its own copy of the config
    # before it builds its workers ("quant_cfg", "megatron_cfg.peft.enabled"): a frozen
    # teacher group runs the unquantized class whatever the student's quant_cfg says.
    clears: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    undecided: tuple[str, ...] = ()
    is_reference: bool = False
    version: str | None = None  # what its nemo_rl/package_info.py says (read as data)
    # Modules of the tree that could not be read or parsed when it was read ("file:
    # cause", the file from the tree's root): any of them may hold a driver, so no
    # verdict on which class a section starts is decided while one is listed.
    unread: tuple[str, ...] = ()
    # A worker class the table names -> why its class cannot be modelled (a cyclic or
    # unlinearizable MRO, a module that does not parse): a section starting it is
    # undecided.
    class_problems: Mapping[str, str] = field(default_factory=dict)
    # Actor-environment registries that could not be evaluated whole ("file:line: why"):
    # a class missing from `environments` may still be registered.
    registry_problems: tuple[str, ...] = ()
    # Why the tree's pyproject.toml could not be used (so `vllm_pin` is not known), if so.
    project_problem: str | None = None
    # The content key the model was stored or loaded under, and the cache holding it
    # (both None without a cache): answers derived from the model and a config (the
    # tree's own rules on it) are kept there under keys that extend this one. Never
    # stored; not part of what the model says.
    key: str | None = field(default=None, compare=False, metadata=NOT_STORED)
    answers: Store | None = field(default=None, compare=False, repr=False,
                                  metadata=NOT_STORED)

    def unread_files(self) -> str | None:
        """The unread modules and their causes as a verdict names them (the first three,
        then how many more), or None when every module was read."""
        if not self.unread:
            return None
        more = len(self.unread) - 3
        return "; ".join(self.unread[:3]) + (f"; and {more} more" if more > 0 else "")

    def label(self) -> str:
        """What the first line of a report names: the tree, its version and commit, its
        schema."""
        schema = (f"{self.schema} schema with _v2" if self.has_v2
                  else f"{self.schema} schema")
        if self.is_reference:
            return f"{REFERENCE_NAME} ({schema})"
        version = f", version {one_line(self.version)}" if self.version else ""
        commit = f" at {self.commit[:12]}" if self.commit else ""
        # A folder's name may hold a newline: escaped, as `audit` escapes paths.
        return f"{one_line(self.name)}{version}{commit} ({schema}; {self.how})"

    def as_json(self) -> dict[str, Any]:
        return {
            "revision": "reference" if self.is_reference else "tree",
            "name": self.name,
            "path": None if self.is_reference else self.root,
            "how": self.how,
            "commit": self.commit,
            "version": self.version,
            "schema": self.schema,
            "v2": self.has_v2,
            "extension_field": self.extension_field,
            "vllm_pin": self.vllm_pin,
            "undecided": list(self.undecided),
            "unread": list(self.unread),
            "project_problem": self.project_problem,
        }

    def roles(self) -> list[str]:
        return list(dict.fromkeys(row.role for row in self.rows))

    def env_of(self, fqn: str) -> str:
        """The environment a class runs in: the registry's; else the one its start names
        (marked so); else "unregistered"."""
        if fqn in self.environments:
            return self.environments[fqn]
        if fqn in self.py_executables:
            return f"{self.py_executables[fqn]} (py_executable)"
        return "unregistered"

    def rows_of(self, driver: str) -> list[TreeRow]:
        return [row for row in self.rows if row.driver == driver]

    def drivers_of(self, role: str) -> list[str]:
        """The drivers of a role: those that start workers first, then the others."""
        starting = [row.driver for row in self.rows if row.role == role]
        others = [name for name, of in self.drivers.items() if of == role]
        return list(dict.fromkeys([*starting, *others]))


# -- the reference ----------------------------------------------------------------------

# The built-in table's (role, backend, mode) as the switches its drivers read.
_Switches = frozenset[tuple[str, bool]]  # tree.conditions' Condition, without importing it
_REFERENCE_SWITCHES: Mapping[tuple[str, str, str | None], tuple[str, _Switches]] = {
    ("policy", "megatron", None): ("Policy", frozenset({("megatron_cfg.enabled", True)})),
    ("policy", "automodel", None): ("Policy", frozenset({("automodel_cfg.enabled", True)})),
    ("generation", "vllm", "sync"): ("VllmGeneration", frozenset({("async_engine", False)})),
    ("generation", "vllm", "async"): ("VllmGeneration", frozenset({("async_engine", True)})),
}


def serves_backend(driver: str, backend: str) -> bool:
    """Whether a generation driver (by class name) is the one a `backend:` value selects:
    `VllmGeneration` for `vllm`, `DynamoGeneration` for `dynamo`."""
    return driver.lower().startswith(backend.lower())


def reference_revision(how: str = "no NeMo-RL tree found", root: str | None = None) -> Revision:
    """The reference: the built-in table (and extensions registered through entry points
    add their environments), the Protocols as what its drivers call."""
    from contracts.protocols import PROTOCOLS
    from nemo_rl_workers.model.registry import RegistryError, default_registry
    from nemo_rl_workers.model.table import BUILTIN_ROWS

    rows = []
    for row in BUILTIN_ROWS:
        driver, condition = _REFERENCE_SWITCHES.get(
            row.key, (f"{row.role} {row.backend}", frozenset()))
        rows.append(TreeRow(row.role, driver, condition, row.default_fqn, row.quantized_fqn))
    environments = {fqn: env.name for row in BUILTIN_ROWS
                    for fqn in (row.default_fqn, row.quantized_fqn) if fqn
                    for env in (row.env,)}
    try:
        environments.update(
            (fqn, env.name) for fqn, env in default_registry().environments().items())
    except RegistryError:
        pass  # the commands that read the table report a broken registration themselves
    calls = {"Policy": _protocol_members(PROTOCOLS["QuantPolicyWorker"]),
             "VllmGeneration": _protocol_members(PROTOCOLS["QuantAsyncGenerationWorker"])}
    return Revision(
        name=REFERENCE_NAME, root=root, how=how, commit=None, schema=NEW_SCHEMA,
        has_v2=False, extension_field="config and constructor", rows=tuple(rows),
        environments=environments,
        defaults={"megatron_cfg.enabled": False, "automodel_cfg.enabled": False},
        vllm_pin=None, calls=calls, drivers={"Policy": "policy", "VllmGeneration": "generation"},
        is_reference=True)


def _protocol_members(protocol: type) -> tuple[str, ...]:
    return tuple(sorted(name for klass in protocol.__mro__ if klass is not object
                        for name in vars(klass) if not name.startswith("_")))
