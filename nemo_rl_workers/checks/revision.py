"""The model of one NeMo-RL revision, which every command judges against.

Built once from a tree's source by the same one-pass source model and driver reader the
audit uses (nothing is imported): its schema generation (`dtensor_cfg` with `_v2`, or
`automodel_cfg`), where it reads `worker_extension_cls_fqn` (the config, the
constructor, both), its worker table for every role (the config switches that select
each class, their defaults as the tree applies them, and each class's quantized
counterpart from its override maps), its actor-environment registry, what its drivers
call on each role's workers, and the vLLM version it pins.

The reference revision (upstream after PR #4176, which this project's runtime
implements) is the same model made from the built-in table. A tree whose drivers select
their workers through `nemo_rl_workers` (this repository's runtime, or a fork built on
it) has the reference's table: it is judged as the reference. What the model cannot
decide is listed in `undecided`, with the reason; it is never a pass.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.checks.audit.knowledge import (
    DRIVER_ROLES,
    EXTENSION_FIELD,
    GENERATION_DRIVER_SUFFIX,
    LIBRARY_PACKAGE,
    SWITCHES,
    driver_side,
)
from nemo_rl_workers.reading.checkout import Checkout, vllm_pin
from nemo_rl_workers.reading.git_head import head_commit
from nemo_rl_workers.reading.tree_version import tree_version

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.conditions import Condition
    from nemo_rl_workers.reading.source import Function, SourceTree

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
        from nemo_rl_workers.checks.audit.conditions import describe

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
    undecided: tuple[str, ...] = ()
    is_reference: bool = False
    version: str | None = None  # what its nemo_rl/package_info.py says (read as data)

    def label(self) -> str:
        """What the first line of a report names: the tree, its commit, its schema."""
        schema = (f"{self.schema} schema with _v2" if self.has_v2
                  else f"{self.schema} schema")
        if self.is_reference:
            return f"{REFERENCE_NAME} ({schema})"
        version = f", version {self.version}" if self.version else ""
        commit = f" at {self.commit[:12]}" if self.commit else ""
        return f"{self.name}{version}{commit} ({schema}; {self.how})"

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
        }

    def roles(self) -> list[str]:
        return list(dict.fromkeys(row.role for row in self.rows))

    def rows_of(self, driver: str) -> list[TreeRow]:
        return [row for row in self.rows if row.driver == driver]

    def drivers_of(self, role: str) -> list[str]:
        """The drivers of a role: those that start workers first, then the others."""
        starting = [row.driver for row in self.rows if row.role == role]
        others = [name for name, of in self.drivers.items() if of == role]
        return list(dict.fromkeys([*starting, *others]))


# -- the reference ----------------------------------------------------------------------

# The built-in table's (role, backend, mode) as the switches its drivers read.
_Switches = frozenset[tuple[str, bool]]  # audit.conditions' Condition, without importing it
_REFERENCE_SWITCHES: Mapping[tuple[str, str, str | None], tuple[str, _Switches]] = {
    ("policy", "megatron", None): ("Policy", frozenset({("megatron_cfg.enabled", True)})),
    ("policy", "automodel", None): ("Policy", frozenset({("automodel_cfg.enabled", True)})),
    ("generation", "vllm", "sync"): ("VllmGeneration", frozenset({("async_engine", False)})),
    ("generation", "vllm", "async"): ("VllmGeneration", frozenset({("async_engine", True)})),
}


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


# -- a tree -----------------------------------------------------------------------------


def revision_of(checkout: Checkout | None) -> Revision:
    """The revision to judge: the reference without a tree, else the tree's model."""
    if checkout is None:
        return reference_revision()
    return _tree_revision(checkout.root, checkout.how, checkout.name)


@functools.cache
def _tree_revision(root: Path, how: str, name: str) -> Revision:
    """Read once per process and tree (every config of a `check` shares it)."""
    if _selects_through_library(root):
        # Judged as the reference, named as it: nothing machine-specific in the report.
        return reference_revision(f"{how}, which selects workers through {LIBRARY_PACKAGE}")
    try:
        return build_revision(root, how, name)
    except (RecursionError, MemoryError, ValueError, OSError) as err:
        # A tree the source model cannot take whole: everything it would decide is
        # undecided, with the reason, and the rest of each config is still checked.
        return Revision(
            name=name, root=str(root), how=how, commit=head_commit(root),
            version=tree_version(root), schema="undecided",
            has_v2=False, extension_field="not read", rows=(), environments={}, defaults={},
            vllm_pin=vllm_pin(root), undecided=(
                f"the tree's source could not be modelled: {type(err).__name__}: {err}",))


def _selects_through_library(root: Path) -> bool:
    """Whether the tree's own modules import the selection library (this repository's
    runtime does: its table is the library's)."""
    from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular
    from nemo_rl_workers.reading.source import MAX_SOURCE_BYTES, discover

    marker = f"{LIBRARY_PACKAGE}.".encode()
    # The source reader's walk and guarded read: no symlinked folder followed, no FIFO
    # waited on, no file read past the size a module may have.
    for path in discover(root / "nemo_rl", []):
        try:
            if marker in read_regular(path, limit=MAX_SOURCE_BYTES, what="a module"):
                return True
        except FileRefused:
            continue
    return False


def build_revision(root: Path, how: str, name: str | None = None) -> Revision:
    """The model of the tree at `root` (the folder holding its `nemo_rl`); `name`: how
    reports name it (default: the folder)."""
    from nemo_rl_workers.checks.audit.drivers import DriverReader
    from nemo_rl_workers.reading.source import Resolver, read_tree

    tree = read_tree(root, packages=["nemo_rl"], eager=driver_side)
    resolver = Resolver(tree)
    reader = DriverReader(tree, resolver)
    side = reader.read()
    undecided: list[str] = []
    rows: list[TreeRow] = []
    for driver in sorted(side.drivers.values(), key=lambda d: d.fqn):
        role = _role_of(driver.name)
        for choice in driver.choices:
            if choice.quantized:
                continue
            rows.append(TreeRow(role, driver.name, choice.condition, choice.fqn,
                                reader.overrides.get(choice.fqn), choice.where))
    switches = {name for row in rows for name, _ in row.condition}
    schema, has_v2 = _schema(switches)
    if schema == "undecided":
        undecided.append("the schema generation: no policy driver reads dtensor_cfg or "
                         "automodel_cfg to choose its worker")
    calls: dict[str, list[str]] = {}
    for dispatch in side.dispatches:
        calls.setdefault(dispatch.owner, []).append(dispatch.method)
    driver_modules = {d.fqn.rpartition(".")[0] for d in side.drivers.values()}
    return Revision(
        name=name or str(root), root=str(root), how=how, commit=head_commit(root),
        version=tree_version(root), schema=schema,
        has_v2=has_v2, extension_field=_extension_field(tree, driver_modules),
        rows=tuple(rows), environments={k: _env_name(v) for k, v in side.environments.items()},
        defaults=_defaults(tree, driver_modules, switches), vllm_pin=vllm_pin(root),
        calls={k: tuple(sorted(set(v))) for k, v in sorted(calls.items())},
        drivers={d.name: _role_of(d.name) for d in side.drivers.values()},
        driver_fqns={d.name: d.fqn for d in side.drivers.values()},
        undecided=tuple(undecided))


def _env_name(text: str) -> str:
    """An environment as the registry names it: a string literal's value, else the
    expression as written (`PY_EXECUTABLES.VLLM`)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def _role_of(driver: str) -> str:
    if driver in DRIVER_ROLES:
        return DRIVER_ROLES[driver]
    return "generation" if driver.endswith(GENERATION_DRIVER_SUFFIX) else driver


def _schema(switches: set[str]) -> tuple[str, bool]:
    new = any(s.startswith(f"{NEW_SCHEMA}.") for s in switches)
    old = any(s.startswith(f"{OLD_SCHEMA}.") for s in switches)
    if new == old:
        return "undecided", False
    schema = NEW_SCHEMA if new else OLD_SCHEMA
    return schema, f"{schema}._v2" in switches


def _functions(tree: SourceTree, modules: set[str]) -> list[Function]:
    return [f for (module, _), f in tree.functions.items() if module in modules]


def _extension_field(tree: SourceTree, modules: set[str]) -> str:
    """Whether the drivers read `worker_extension_cls_fqn` from the config (a subscript
    or `.get` key) or take it as a constructor argument (a parameter), or both."""
    from nemo_rl_workers.checks.audit.conditions import key_chain

    from_config = from_constructor = False
    for function in _functions(tree, modules):
        if any(p.name == EXTENSION_FIELD for p in function.params):
            from_constructor = True
        for node in ast.walk(function.node):
            if isinstance(node, ast.Subscript | ast.Call) and key_chain(node)[-1:] == [
                    EXTENSION_FIELD]:
                from_config = True
    if from_config and from_constructor:
        return "config and constructor"
    return "config" if from_config else "constructor" if from_constructor else "not read"


def _defaults(tree: SourceTree, modules: set[str], switches: set[str]) -> dict[str, bool]:
    """Each switch's value where the config leaves it out, as the drivers read it:
    the literal default of a `.get(key, default)` whose key chain ends with the switch's
    keys. A switch read only by subscript has none (the key is required)."""
    from nemo_rl_workers.checks.audit.conditions import key_chain

    found: dict[str, bool] = {}
    for function in _functions(tree, modules):
        for node in ast.walk(function.node):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, bool)):
                continue
            keys = tuple(key_chain(node))
            for name in switches:
                wanted = SWITCHES[name].keys if name in SWITCHES else ()
                if wanted and keys[-len(wanted):] == wanted:
                    found.setdefault(name, node.args[1].value)
    return found
