"""The guard's model of a tree's drivers, on disk, keyed by the content of every file read.

What the guard needs of the user's NeMo-RL tree to judge a class, for each driver (by class
name, as the audit names drivers): the calls it makes on its workers by name (method,
positional count, keywords, whether some keywords come from an unknown mapping, stream or
value, where, and whether it makes it unconditionally), the audit's verdicts on the
tree's own worker classes of that driver on those calls (rule, method, call site: what
upstream's own classes fail is the audit's business, never a reason to refuse a run), each
of those classes with its MRO and what it fails itself (a class extending one is held to
no more than it: `worker_check.stands_for`), and
the revision's Protocols as `audit --emit-protocols` writes them (from the tree's
`nemo_rl` alone: an annotation naming what the tree does not define is `Any`), each with
the driver and default worker it is of (the workers' interpreter checks the class
against one with `contracts`).

Built once from source (`read_tree`, `DriverReader`, `audit.rules.check`), the costly
part, and stored in the cache (`cache.store`, in the library's folder for tree models,
`cache.folder.model_cache_dir()`), as a computation of its own (`DRIVERS`) over the
inputs of every model of the tree (`tree.model_inputs`: every module of its `nemo_rl`,
this program's code and the interpreter); the revision model's entry is another. A
second process, and a second group in one process, read no source of the tree: the class
itself is modelled on demand (`guard.class_model`).

The key (a stat of every file) is on the way to a program's first worker group, before
the task in the workers' interpreter can be sent. So the entry last stored or found for
the tree is named by a small pointer entry, and `provisional_model` reads it with no key:
the task is sent with its calls and Protocols at once, and the verdict is asked of the
model the key finds (`driver_model`); where the two differ (the tree changed since) the
task is sent again with the verified model's. No verdict rests on the provisional one.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.guard import PREFIX
from nemo_rl_workers.tree.model_inputs import TreeInputs, tree_inputs

if TYPE_CHECKING:
    from nemo_rl_workers.cache.store import Store
    from nemo_rl_workers.checks.audit.rules import Finding
    from nemo_rl_workers.guard.worker_check import Base
    from nemo_rl_workers.tree.source import Resolver, SourceTree

PACKAGE = "nemo_rl"
Known = tuple[str, str, str]  # (rule, method, call): a finding the tree's own classes have
# (a worker class the driver starts, the FQNs of its MRO in the tree, its own findings on
# the driver's calls): `worker_check.Base` with each finding whole.
OwnWorker = tuple[str, tuple[str, ...], frozenset[Known]]


@dataclass(frozen=True)
class DriverCall:
    """One call a driver makes on its workers by name."""

    driver: str  # the calling class's name
    function: str  # the calling function, "Policy.train"
    method: str
    positional: int
    keywords: tuple[str, ...]  # sorted
    open_keywords: bool
    stream: bool | None
    call: str  # file:line
    helper: str
    always: bool  # made on every run (no switch guards it)
    unswitched: bool  # no switch the driver selects its class by guards it


@dataclass(frozen=True)
class DriverModel:
    calls: Mapping[str, tuple[DriverCall, ...]]  # driver name -> its calls
    known: Mapping[str, frozenset[Known]]  # driver name -> its own classes' findings
    # The revision's Protocols, as `audit --emit-protocols` writes them, each as a module
    # of its own (Protocol name -> text; none where none could be emitted), and driver
    # name -> (default worker FQN, its Protocol's name).
    protocols: Mapping[str, str] = field(default_factory=dict)
    roles: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # driver name -> the worker classes it starts, each with what it fails itself
    workers: Mapping[str, tuple[OwnWorker, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LatestInputs:
    folder: str  # the tree's


@dataclass(frozen=True)
class Latest:
    key: str  # of the entry last stored or found for the tree


def model_key(root: Path, cache: Store | None = None) -> str:
    """The entry's key for the tree at `root` (see the module docstring); unchanged files'
    digests come from `cache`'s index."""
    return DRIVERS.key(tree_inputs(root, cache))


def build(root: Path) -> DriverModel:
    """The model from the tree's source (the audit's driver side, call rules and
    Protocols)."""
    from nemo_rl_workers.checks.audit.context import AuditContext
    from nemo_rl_workers.checks.audit.protocols_emit import emission
    from nemo_rl_workers.checks.audit.rules import check
    from nemo_rl_workers.tree.drivers import DriverReader, restricted
    from nemo_rl_workers.tree.knowledge import driver_side
    from nemo_rl_workers.tree.source import Resolver, read_tree

    tree = read_tree(root, packages=[PACKAGE], eager=driver_side)
    resolver = Resolver(tree)
    reader = DriverReader(tree, resolver)
    side = reader.read()
    owners = sorted({d.name for d in side.drivers.values()} | {d.owner for d in side.dispatches})
    calls: dict[str, tuple[DriverCall, ...]] = {}
    known: dict[str, frozenset[Known]] = {}
    workers: dict[str, tuple[OwnWorker, ...]] = {}
    choices = {name: reader.choices_of(name) for name in owners}
    for name in owners:
        driver, own = choices[name]
        dispatches = [d for d in side.dispatches if d.owner == name and d.worker is None]
        calls[name] = tuple(
            DriverCall(d.driver, d.function, d.method, d.positional, tuple(sorted(d.keywords)),
                       d.open_keywords, d.stream, d.call, d.helper, not d.condition,
                       not restricted(d, driver))
            for d in dispatches)
        theirs, _ = check(tree, resolver, dispatches, {name: (driver, own)})
        known[name] = frozenset((f.rule, f.method, f.call) for f in theirs)
        workers[name] = tuple(_own_worker(tree, resolver, fqn, theirs)
                              for fqn in dict.fromkeys(c.fqn for c in own))
    try:
        emitted = emission(AuditContext(root, tree, resolver, side, choices))
    except ValueError:  # a tree whose Protocols cannot be written: none checked
        return DriverModel(calls, known, workers=workers)
    roles: dict[str, list[tuple[str, str]]] = {}
    for driver_name, worker, protocol in emitted.roles:
        roles.setdefault(driver_name, []).append((worker, protocol))
    return DriverModel(calls, known, one_module_each(emitted.text),
                       {k: tuple(v) for k, v in roles.items()}, workers)


def _own_worker(tree: SourceTree, resolver: Resolver, fqn: str,
                findings: Sequence[Finding]) -> OwnWorker:
    from nemo_rl_workers.tree.source import resolve_fqn

    info = resolve_fqn(tree, fqn)
    mro = tuple(c.fqn for c in resolver.mro(info).classes) if info is not None else (fqn,)
    return fqn, mro, frozenset((f.rule, f.method, f.call) for f in findings
                               if fqn in (f.worker, *f.workers))


def bases_of(workers: Sequence[OwnWorker]) -> tuple[Base, ...]:
    """The workers as the workers' interpreter takes them (`worker_check.Base`): the
    methods each fails of its driver's calls."""
    return tuple((fqn, mro, tuple(sorted({method for _, method, _ in fails})))
                 for fqn, mro, fails in workers)


def one_module_each(text: str) -> dict[str, str]:
    """Each Protocol class of an emitted module as a module of its own: the imports its
    body names (`__future__`'s too) and the class, all the workers' interpreter runs of it
    (`worker_check.against_protocol`). A guarded run checks and sends only the one it
    judges against: parsing the revision's whole module took 0.17 s of a group's start."""
    import ast

    body = ast.parse(text).body
    imports = [node for node in body if isinstance(node, ast.ImportFrom)]
    out: dict[str, str] = {}
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        kept: list[ast.stmt] = []
        for imported in imports:
            names = imported.names if imported.module == "__future__" else [
                a for a in imported.names if (a.asname or a.name) in used]
            if names:
                kept.append(ast.ImportFrom(imported.module, names, imported.level))
        out[node.name] = ast.unparse(ast.Module([*kept, node], []))
    return out


def _cache() -> Store | None:
    """The store every command uses for tree models, or None (said once) where it cannot
    be."""
    from nemo_rl_workers.cache.folder import model_cache_dir
    from nemo_rl_workers.cache.store import CacheDirError, Store

    try:
        return Store.open(model_cache_dir(), create=False)
    except CacheDirError as bad:
        print(f"{PREFIX}: {bad}; the tree's drivers are read from source", file=sys.stderr,
              flush=True)
        return None


@functools.cache
def safe_protocols(text: str) -> bool:
    """Whether stored Protocols are only what emission writes (they run in the workers'
    interpreter; checked where they are about to, not on every load)."""
    from nemo_rl_workers.checks.audit.protocols_shape import EmitError, check_emitted

    try:
        check_emitted(text)
    except EmitError:
        return False
    return True


@functools.cache
def driver_model(root: str) -> DriverModel:
    """The model of the tree at `root` (the folder holding its `nemo_rl`): from the
    store where an entry validly holds it, else built and stored; once a process."""
    path = Path(root)
    cache = _cache()
    if cache is None:
        return build(path)
    key = model_key(path, cache)
    got = cache.get_at(DRIVERS, key)
    if got.payload is not None:
        _point(cache, root, key)
        return got.payload
    if got.ignored is not None:
        _ignored(cache.describe(key), got.ignored)
    model = build(path)
    cache.put_at(DRIVERS, key, model)
    _point(cache, root, key)
    return model


def provisional_model(root: str) -> DriverModel | None:
    """The model last stored or found for the tree at `root`, read without its key (see
    the module docstring): what the task in the workers' interpreter is first sent with,
    never a verdict's ground; None where there is none, or it does not load whole."""
    cache = _cache()
    if cache is None:
        return None
    pointer = cache.get(LATEST, LatestInputs(root)).payload
    if pointer is None or not pointer.key.isalnum():
        return None
    return cache.get_at(DRIVERS, pointer.key).payload  # said, and read again, where
    # `driver_model` meets a damaged one


def _point(cache: Store, root: str, key: str) -> None:
    pointer = cache.get(LATEST, LatestInputs(root)).payload
    if pointer is None or pointer.key != key:
        cache.put(LATEST, LatestInputs(root), Latest(key))


def _ignored(entry: str, why: str) -> None:
    print(f"{PREFIX}: cache entry {entry} {why}; ignored, the tree is read again",
          file=sys.stderr, flush=True)


DRIVERS = Computation("guard-drivers", TreeInputs, DriverModel, "model")
LATEST = Computation("latest-guard-drivers", LatestInputs, Latest)
