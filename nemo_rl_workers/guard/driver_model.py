"""The guard's model of a tree's drivers, on disk, keyed by the content of every file read.

What the guard needs of the user's NeMo-RL tree to judge a class, for each driver (by class
name, as the audit names drivers): the calls it makes on its workers by name (method,
positional count, keywords, whether some keywords come from an unknown mapping, stream or
value, where, and whether it makes it unconditionally), the audit's verdicts on the
tree's own worker classes of that driver on those calls (rule, method, call site: what
upstream's own classes fail is the audit's business, never a reason to refuse a run), and
the revision's Protocols as `audit --emit-protocols` writes them (from the tree's
`nemo_rl` alone: an annotation naming what the tree does not define is `Any`), each with
the driver and default worker it is of (the workers' interpreter checks the class
against one with `contracts`).

Built once from source (`read_tree`, `DriverReader`, `audit.rules.check`), the costly
part, and stored in the content cache (`tree.cache`, the folder every command uses,
`commands.cache.model_cache_dir()`), under a key of its own over the bytes of every
module of the tree's `nemo_rl` (through the guarded reader: a file it would refuse is
keyed by its refusal), this program's code and the interpreter; the revision model's
entry is another. A second process, and a second group in one process, read no source
of the tree: the class itself is modelled on demand (`guard.class_model`).

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.guard import PREFIX

if TYPE_CHECKING:
    from nemo_rl_workers.tree.cache import ContentCache

PACKAGE = "nemo_rl"
KIND = "guard-drivers"
Known = tuple[str, str, str]  # (rule, method, call): a finding the tree's own classes have


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


def model_key(root: Path, cache: ContentCache | None = None) -> str:
    """The entry's key for the tree at `root` (see the module docstring): the revision
    model's scheme, under this model's own kind (unchanged files' digests from `cache`'s
    index)."""
    from nemo_rl_workers.tree.content_key import tree_content_key

    return tree_content_key(root, KIND, cache)


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
    try:
        emitted = emission(AuditContext(root, tree, resolver, side, choices))
    except ValueError:  # a tree whose Protocols cannot be written: none checked
        return DriverModel(calls, known)
    roles: dict[str, list[tuple[str, str]]] = {}
    for driver_name, worker, protocol in emitted.roles:
        roles.setdefault(driver_name, []).append((worker, protocol))
    return DriverModel(calls, known, one_module_each(emitted.text),
                       {k: tuple(v) for k, v in roles.items()})


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


def as_payload(model: DriverModel) -> dict[str, Any]:
    return {
        "calls": {name: [[c.driver, c.function, c.method, c.positional, list(c.keywords),
                          c.open_keywords, c.stream, c.call, c.helper, c.always, c.unswitched]
                         for c in calls] for name, calls in model.calls.items()},
        "known": {name: sorted(list(k) for k in known) for name, known in model.known.items()},
        "protocols": dict(model.protocols),
        "roles": {name: [list(r) for r in roles] for name, roles in model.roles.items()},
    }


class BadPayload(ValueError):
    """A stored model that is not what `as_payload` writes."""


def from_payload(payload: Mapping[str, Any]) -> DriverModel:
    """BadPayload when any part is not of its type (the entry is then not trusted)."""
    try:
        calls = {
            str(name): tuple(_call(row) for row in rows)
            for name, rows in dict(payload["calls"]).items()}
        known = {
            str(name): frozenset(_known(row) for row in rows)
            for name, rows in dict(payload["known"]).items()}
        protocols = dict(payload["protocols"])
        roles = {str(name): tuple(_role(row) for row in rows)
                 for name, rows in dict(payload["roles"]).items()}
    except BadPayload:
        raise
    except (KeyError, TypeError, ValueError) as bad:
        raise BadPayload(f"{type(bad).__name__}: {bad}") from bad
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in protocols.items()):
        raise BadPayload("Protocols that are not text")
    return DriverModel(calls, known, protocols, roles)


def _role(row: object) -> tuple[str, str]:
    if not isinstance(row, list) or len(row) != 2 or not all(isinstance(t, str) for t in row):
        raise BadPayload("a role of another shape")
    return row[0], row[1]


def _call(row: object) -> DriverCall:
    if not isinstance(row, list) or len(row) != 11:
        raise BadPayload("a call of another shape")
    driver, function, method, positional, keywords, open_kw, stream, call, helper, always, \
        unswitched = row
    texts = (driver, function, method, call, helper)
    flags = (open_kw, always, unswitched)
    if not all(isinstance(t, str) for t in texts) or not all(isinstance(f, bool) for f in flags) \
            or type(positional) is not int or not isinstance(keywords, list) \
            or not all(isinstance(k, str) for k in keywords) \
            or not (stream is None or isinstance(stream, bool)):
        raise BadPayload("a call field of another type")
    return DriverCall(driver, function, method, positional, tuple(keywords), open_kw, stream,
                      call, helper, always, unswitched)


def _known(row: object) -> Known:
    if not isinstance(row, list) or len(row) != 3 or not all(isinstance(t, str) for t in row):
        raise BadPayload("a verdict of another shape")
    return row[0], row[1], row[2]


def _cache() -> Any:
    """The content cache every command uses, or None (said once) where it cannot be."""
    from nemo_rl_workers.commands.cache import model_cache_dir
    from nemo_rl_workers.tree.cache import CacheDirError, ContentCache

    try:
        return ContentCache.open(model_cache_dir(), create=False)
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
    content cache where an entry validly holds it, else built and stored; once a process."""
    path = Path(root)
    cache = _cache()
    key = model_key(path, cache) if cache is not None else ""
    if cache is not None:
        loaded = cache.load_entry(key)
        if loaded.payload is not None:
            try:
                model = from_payload(loaded.payload)
            except BadPayload as bad:
                _ignored(cache.describe(key), f"holds a damaged model ({bad})")
            else:
                _point(cache, root, key)
                return model
        elif loaded.ignored is not None:
            _ignored(cache.describe(key), loaded.ignored)
    model = build(path)
    if cache is not None:
        cache.store(key, as_payload(model))
        _point(cache, root, key)
    return model


def provisional_model(root: str) -> DriverModel | None:
    """The model last stored or found for the tree at `root`, read without its key (see
    the module docstring): what the task in the workers' interpreter is first sent with,
    never a verdict's ground; None where there is none, or it does not load whole."""
    cache = _cache()
    if cache is None:
        return None
    pointer = cache.load(_pointer_name(root))
    key = pointer.get("key") if pointer is not None else None
    payload = cache.load(key) if isinstance(key, str) and key.isalnum() else None
    try:
        return from_payload(payload) if payload is not None else None
    except BadPayload:
        return None  # said, and read again, where `driver_model` meets it


def _pointer_name(root: str) -> str:
    import hashlib

    return "latest-" + hashlib.sha256(f"{KIND}\0{root}".encode("utf-8",
                                                               "surrogateescape")).hexdigest()


def _point(cache: Any, root: str, key: str) -> None:
    name = _pointer_name(root)
    pointer = cache.load(name)
    if pointer is None or pointer.get("key") != key:
        cache.store(name, {"key": key})


def _ignored(entry: str, why: str) -> None:
    print(f"{PREFIX}: cache entry {entry} {why}; ignored, the tree is read again",
          file=sys.stderr, flush=True)
