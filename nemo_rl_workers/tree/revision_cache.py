"""A tree's revision model on disk, keyed by the content of every file it was built from.

The key covers the bytes of every module `revision_build` reads (the files the source
walk lists under the tree's `nemo_rl`, each through the guarded reader: a file it would
refuse is keyed by its refusal, never read or hashed), the tree's folder, this program's
own code and the interpreter. The payload is the model's JSON; what changes without any
of those files changing (the commit, the vLLM pin, how the tree was found and is named)
is read afresh on every run and never stored; so is the version `package_info.py` states.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from nemo_rl_workers.tree.cache import ContentCache
from nemo_rl_workers.tree.cluster_builds import ClusterBuild
from nemo_rl_workers.tree.content_key import tree_content_key
from nemo_rl_workers.tree.entry_builds import EntryBuild
from nemo_rl_workers.tree.revision import Revision, TreeRow

_KIND = "revision"
_T = TypeVar("_T")


def revision_key(root: Path, cache: ContentCache | None = None) -> str:
    """The entry's key for the tree at `root` (see the module docstring); with `cache`,
    unchanged files' digests come from its index (`content_key`)."""
    return tree_content_key(root, _KIND, cache)


def as_payload(revision: Revision | None) -> dict[str, Any]:
    """The stored form: None stands for a tree judged as the reference."""
    if revision is None:
        return {"library": True}
    return {
        "library": False,
        "schema": revision.schema,
        "v2": revision.has_v2,
        "extension_field": revision.extension_field,
        "rows": [[r.role, r.driver, sorted([n, v] for n, v in r.condition), r.default_fqn,
                  r.quantized_fqn, r.where] for r in revision.rows],
        "environments": dict(revision.environments),
        "defaults": dict(revision.defaults),
        "calls": {k: list(v) for k, v in revision.calls.items()},
        "drivers": dict(revision.drivers),
        "driver_fqns": dict(revision.driver_fqns),
        "extension_params": dict(revision.extension_params),
        "builds": dict(revision.builds),
        "setups": {k: None if v is None else list(v) for k, v in revision.setups.items()},
        "entry_builds": [[b.module, b.driver, b.section, b.where, b.cluster, b.via]
                         for b in revision.entry_builds],
        "cluster_builds": [[b.module, b.name, b.bundles, b.line, b.where]
                           for b in revision.cluster_builds],
        "py_executables": dict(revision.py_executables),
        "clears": {k: list(v) for k, v in revision.clears.items()},
        "undecided": list(revision.undecided),
        "unread": list(revision.unread),
        "class_problems": dict(revision.class_problems),
        "registry_problems": list(revision.registry_problems),
    }


class BadPayload(ValueError):
    """A stored model that is not what `as_payload` writes."""


def from_payload(payload: Mapping[str, Any], *, name: str, root: Path, how: str,
                 commit: str | None, version: str | None, vllm_pin: str | None,
                 project_problem: str | None) -> Revision | None:
    """The model stored by `as_payload`, with what is read afresh; None: the reference.
    BadPayload when any part is not of its type (the entry is then not trusted)."""
    if _typed(payload.get("library"), bool):
        return None
    rows = tuple(_row(item) for item in _list(payload.get("rows")))
    return Revision(
        name=name, root=str(root), how=how, commit=commit, version=version,
        schema=_typed(payload.get("schema"), str), has_v2=_typed(payload.get("v2"), bool),
        extension_field=_typed(payload.get("extension_field"), str), rows=rows,
        environments=_strings(payload.get("environments")),
        defaults={k: _typed(v, bool) for k, v in _mapping(payload.get("defaults")).items()},
        vllm_pin=vllm_pin, project_problem=project_problem,
        calls={k: tuple(_typed(m, str) for m in _list(v))
               for k, v in _mapping(payload.get("calls")).items()},
        drivers=_strings(payload.get("drivers")),
        driver_fqns=_strings(payload.get("driver_fqns")),
        extension_params=_strings(payload.get("extension_params")),
        builds=_strings(payload.get("builds")),
        setups={k: None if v is None else tuple(_typed(s, str) for s in _list(v))
                for k, v in _mapping(payload.get("setups")).items()},
        entry_builds=tuple(_entry_build(item) for item in _list(payload.get("entry_builds"))),
        cluster_builds=tuple(_cluster_build(item)
                             for item in _list(payload.get("cluster_builds"))),
        py_executables=_strings(payload.get("py_executables")),
        clears={k: tuple(_typed(s, str) for s in _list(v))
                for k, v in _mapping(payload.get("clears")).items()},
        undecided=tuple(_typed(u, str) for u in _list(payload.get("undecided"))),
        unread=tuple(_typed(u, str) for u in _list(payload.get("unread"))),
        class_problems=_strings(payload.get("class_problems")),
        registry_problems=tuple(_typed(u, str) for u in _list(payload.get("registry_problems"))))


def _row(item: object) -> TreeRow:
    fields = _list(item)
    if len(fields) != 6:
        raise BadPayload("a row of another shape")
    role, driver, condition, default, quantized, where = fields
    pairs = frozenset((_typed(n, str), _typed(v, bool))
                      for n, v in (_pair(p) for p in _list(condition)))
    return TreeRow(_typed(role, str), _typed(driver, str), pairs, _typed(default, str),
                   None if quantized is None else _typed(quantized, str),
                   None if where is None else _typed(where, str))


def _entry_build(item: object) -> EntryBuild:
    fields = _list(item)
    if len(fields) != 6:
        raise BadPayload("an entry build of another shape")
    module, driver, section, where = (_typed(f, str) for f in fields[:4])
    cluster, via = (None if f is None else _typed(f, str) for f in fields[4:])
    return EntryBuild(module, driver, section, where, cluster, via)


def _cluster_build(item: object) -> ClusterBuild:
    fields = _list(item)
    if len(fields) != 5:
        raise BadPayload("a cluster build of another shape")
    module, name, bundles, line, where = fields
    if isinstance(line, bool):
        raise BadPayload("a bool where a line belongs")
    return ClusterBuild(_typed(module, str), _typed(name, str), _typed(bundles, str),
                        _typed(line, int), _typed(where, str))


def _typed(value: object, kind: type[_T]) -> _T:
    if not isinstance(value, kind):
        raise BadPayload(f"a {type(value).__name__} where a {kind.__name__} belongs")
    return value


def _list(value: object) -> list[object]:
    return _typed(value, list)


def _pair(value: object) -> tuple[object, object]:
    items = _list(value)
    if len(items) != 2:
        raise BadPayload("a switch of another shape")
    return items[0], items[1]


def _mapping(value: object) -> dict[str, object]:
    return {_typed(k, str): v for k, v in _typed(value, dict).items()}


def _strings(value: object) -> dict[str, str]:
    return {k: _typed(v, str) for k, v in _mapping(value).items()}


__all__ = ["BadPayload", "ContentCache", "as_payload", "from_payload", "revision_key",
           "tree_content_key"]
