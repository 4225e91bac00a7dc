"""Resolving `${...}` on only the part of a config that interpolation touches.

OmegaConf wraps every node of a config in its own objects before it resolves
anything, which costs far more than the few dozen interpolations a NeMo-RL recipe
holds. Resolution reads nothing but the interpolating strings and the nodes they
name, so OmegaConf is handed just those, at the same paths (relative references
such as `${..x}` then see the same parents), and its answers are written back into
a copy of the full config. OmegaConf still does all the resolving: the semantics
are its own.

When the references cannot be read with certainty (a resolver that may look nodes
up by name, such as `oc.select`; a reference of an unexpected shape), `resolve_pruned`
returns None and the caller resolves the whole config, as does any failure: the
full resolution then gives the exact answer or error it always gave.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from nemo_rl_workers.reading.plain_data import plain_copy

Key = str | int
Path = tuple[Key, ...]

# `${` then a path or a resolver name, then what ends it: `}` for a path, `:` for a resolver.
_HEAD = re.compile(r"\$\{\s*([^\s:}${,\\'\"]*)\s*(.?)", re.DOTALL)


def _interpolating_leaves(node: object, at: Path, out: list[Path]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _interpolating_leaves(value, (*at, key), out)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _interpolating_leaves(item, (*at, i), out)
    elif isinstance(node, str) and "${" in node:
        out.append(at)


def _references(text: str, safe_resolvers: frozenset[str]) -> list[str] | None:
    """The node paths `text` interpolates, or None when that cannot be told for sure."""
    paths: list[str] = []
    for match in _HEAD.finditer(text):
        name, end = match.groups()
        if end == ":":
            if name not in safe_resolvers:
                return None
        elif end == "}":
            paths.append(name)
        else:
            return None
    return paths


def _target(ref: str, at: Path) -> tuple[str, ...]:
    """The path a reference names, seen from the node at `at` (OmegaConf's rules:
    `.x` is in the node's own container, each further dot one container up)."""
    dots = len(ref) - len(ref.lstrip("."))
    parts = tuple(p for p in re.split(r"[.\[\]]+", ref[dots:]) if p)
    if dots == 0:
        return parts
    return tuple(str(k) for k in at[: max(len(at) - dots, 0)]) + parts


def _existing(data: dict[str, Any], parts: Iterable[str]) -> Path:
    """The longest existing prefix of `parts`, stopping at a list (lists are kept whole)."""
    node: object = data
    found: list[Key] = []
    for part in parts:
        if not isinstance(node, dict):
            break
        key: Key
        if part in node:
            key = part
        elif part.lstrip("-").isdigit() and int(part) in node:
            key = int(part)
        else:
            break
        found.append(key)
        node = node[key]
    return tuple(found)


def _whole(data: dict[str, Any], at: Path) -> Path:
    """`at`, cut at its first list: a list is kept or written back whole."""
    node: Any = data
    for i, key in enumerate(at):
        if isinstance(node, list):
            return at[:i]
        node = node[key]
    return at


def _get(data: dict[str, Any], at: Path) -> Any:
    """The node at `at`, a path found by walking `data` (or a copy of it)."""
    node: Any = data
    for key in at:
        node = node[key]
    return node


def _put(data: dict[Any, Any], at: Path, value: object) -> None:
    node = data
    for key in at[:-1]:
        node = node.setdefault(key, {})
    node[at[-1]] = value


def _components(
    data: dict[str, Any], safe_resolvers: frozenset[str]
) -> list[tuple[list[Path], list[Path]]] | None:
    """Groups of interpolating leaves that resolve independently of each other.

    Each group is (paths to keep, paths to write back). Groups never share a node:
    two leaves whose kept paths nest (one inside the other) are in the same group, so
    a leaf inside a node another leaf names travels with it.
    """
    leaves: list[Path] = []
    _interpolating_leaves(data, (), leaves)
    kept: list[set[Path]] = []
    for leaf in leaves:
        refs = _references(_get(data, leaf), safe_resolvers)
        if refs is None:
            return None
        paths = {_whole(data, leaf), *(_existing(data, _target(ref, leaf)) for ref in refs)}
        if () in paths:
            return None  # the whole config is needed anyway
        kept.append(paths)
    parent = list(range(len(leaves)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Path, int] = {}
    for i, paths in enumerate(kept):
        for at in paths:
            for depth in range(1, len(at) + 1):
                j = owner.get(at[:depth])
                if j is not None:
                    parent[find(i)] = find(j)
            owner.setdefault(at, i)
    # a path kept by a later leaf that is an ancestor of an earlier one's
    for at, i in owner.items():
        for depth in range(1, len(at)):
            j = owner.get(at[:depth])
            if j is not None:
                parent[find(i)] = find(j)
    groups: dict[int, tuple[set[Path], set[Path]]] = {}
    for i, leaf in enumerate(leaves):
        keep, write = groups.setdefault(find(i), (set(), set()))
        keep.update(kept[i])
        write.add(_whole(data, leaf))
    return [(sorted(keep, key=len), sorted(write, key=len)) for keep, write in groups.values()]


def _sub_config(data: dict[str, Any], keep: list[Path]) -> dict[str, Any]:
    sub: dict[Any, Any] = {}
    placed: set[Path] = set()
    for at in keep:  # shortest first
        if any(at[:i] in placed for i in range(1, len(at))):
            continue  # inside a subtree already kept whole
        _put(sub, at, _get(data, at))
        placed.add(at)
    return sub


_RESOLVED: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, Any]] = {}
_RESOLVED_MAX = 4096


def forget_resolutions() -> None:
    """Forget the resolutions this process kept: the next one is made anew."""
    _RESOLVED.clear()


def _cache_key(sub: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    # repr of plain YAML data tells 1, 1.0, True and "1" apart and keeps key order;
    # a group reading the environment is keyed by the environment too.
    text = repr(sub)
    env = tuple(sorted(os.environ.items())) if "oc.env" in text else ()
    return text, env


# `${a.b}`, `${.b}`, `${..b}`: one reference to a node by its keys, and nothing else.
_WHOLE_REFERENCE = re.compile(r"\$\{(\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_SCALARS = (str, int, float, bool, type(None))
_KEY_MARKS = frozenset(".[]${}")


def copied_references(sub: dict[str, Any]) -> dict[str, Any] | None:
    """`sub` resolved as OmegaConf resolves it, where that is a copy: every value a plain
    scalar or mapping with plain keys, and every interpolation one whole reference
    (`${a.b}`, `${..b}`) to a scalar that interpolates nothing, which OmegaConf then gives
    as it is (half of a corpus's groups, each an OmegaConf parse saved). None for anything
    else (a resolver, text around a reference, a list, a missing or mandatory value, too
    many dots): OmegaConf decides those."""
    leaves: list[Path] = []
    if not _plain_mapping(sub, (), leaves):
        return None
    out: dict[str, Any] = plain_copy(sub)
    for at in leaves:
        match = _WHOLE_REFERENCE.fullmatch(_get(sub, at))
        if match is None:
            return None
        ref = match.group(1)
        if len(ref) - len(ref.lstrip(".")) > len(at):
            return None  # above the root: OmegaConf's error
        node: object = sub
        for part in _target(ref, at):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        if type(node) not in _SCALARS or (isinstance(node, str) and (
                "${" in node or node == "???")):
            return None
        _put(out, at, node)
    return out


def _plain_mapping(node: dict[Any, Any], at: Path, leaves: list[Path]) -> bool:
    """Whether `node` holds plain keys, scalars and mappings only (no "???"); the paths of
    its interpolating strings gathered in `leaves`."""
    for key, value in node.items():
        if not isinstance(key, str) or not key or not _KEY_MARKS.isdisjoint(key):
            return False
        if isinstance(value, dict):
            if not _plain_mapping(value, (*at, key), leaves):
                return False
        elif type(value) not in _SCALARS or value == "???":
            return False
        elif isinstance(value, str) and "${" in value:
            leaves.append((*at, key))
    return True


def _resolved(sub: dict[str, Any], resolve_whole: Callable[[dict[str, Any]], dict[str, Any]]
              ) -> dict[str, Any] | None:
    """`resolve_whole(sub)`, once per sub-config and environment in this process; None
    where it fails."""
    key = _cache_key(sub)
    resolved = _RESOLVED.get(key)
    if resolved is None:
        try:
            resolved = resolve_whole(sub)
        except Exception:
            return None
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[key] = resolved
    return resolved


def resolve_pruned(
    data: dict[str, Any],
    safe_resolvers: frozenset[str],
    resolve_whole: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any] | None:
    """`data` resolved group by group (a group of plain references copied, any other
    through `resolve_whole`); None when unsure or failing.

    A group's answer depends on nothing but its sub-config (the resolvers allowed
    here are pure, or read the environment, which is in the key), so recipes that
    share a parent share its groups' answers within the process.
    """
    groups = _components(data, safe_resolvers)
    if groups is None:
        return None
    out: dict[str, Any] = plain_copy(data)
    for keep, write in groups:
        sub = _sub_config(data, keep)
        resolved = copied_references(sub)
        if resolved is None:
            resolved = _resolved(sub, resolve_whole)
        if resolved is None:
            return None  # the caller's full resolution gives the real error
        for at in write:
            _put(out, at, plain_copy(_get(resolved, at)))
    return out
