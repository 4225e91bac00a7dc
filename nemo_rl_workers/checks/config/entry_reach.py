"""The drivers an entry builds through a function of its tree, where the config runs it.

An entry's `setup` may build a driver inside a module-level function it calls with blocks
of its config (`EntryBuild.via`: GRPO builds on-policy distillation's teacher groups in
`opd_module.create_teacher_worker_groups(master_config, policy_config, ...)`, under `if
enable_opd_teachers:`, which it sets from `is_non_colocated_teachers_enabled(master_config)`).
Whether that call runs is the config's to decide: `setup` is walked in statement order on
the config, as the world size's walk does (the tree's helpers run on config values), past
the drivers it builds, to the call's line: reached, skipped by a decided branch, or
undecided with the reason. A reached build is judged as a section of its own, named
`<block> (<driver>)`, with the driver's own rows (its cleared keys included); an
undecided one is said in one skipped line, never judged as if it ran.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.checks.config.entry_sections import at_path, entry_of
from nemo_rl_workers.checks.config.tree_world_size import SizeWalk, setup_scope
from nemo_rl_workers.interpret.expressions import truth
from nemo_rl_workers.tree.knowledge import SETUP
from nemo_rl_workers.tree.source.gc_pause import collector_paused

if TYPE_CHECKING:
    from nemo_rl_workers.interpret.expressions import Scope
    from nemo_rl_workers.interpret.walk import Branch
    from nemo_rl_workers.tree.entry_builds import EntryBuild
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import Function, SourceTree

_COMPOUND = (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Reach:
    """Whether the walk reached the line (None: undecided, `why` says why)."""

    reached: bool | None
    why: str | None = None


@dataclass(frozen=True)
class ThroughBuild:
    """A build through a function of the tree, and whether this config runs it."""

    build: EntryBuild
    label: str  # the section's name in the report: "policy (TeacherWorkerGroup)"
    section: Mapping[str, Any]
    reach: Reach


def through_builds(config: Mapping[str, Any], revision: Revision,
                   environ: Mapping[str, str] | None = None) -> Iterator[ThroughBuild]:
    """Each build of the config's entry made through one of its tree's functions, on a
    block the config has, with whether the config runs its call."""
    entry = entry_of(config, revision) if revision.root is not None else None
    builds = [b for b in revision.entry_builds if b.module == entry and b.via is not None]
    if entry is None or not builds:
        return
    walked: dict[int, Reach] = {}
    for build in builds:
        section = at_path(config, build.section)
        if section is None or build.via is None:
            continue
        line = int(build.via.rpartition(":")[2] or 0)
        if line not in walked:
            with collector_paused():  # it models the modules it walks
                walked[line] = _reach(config, revision, entry, line, environ)
        yield ThroughBuild(build, f"{build.section} ({build.driver})", section, walked[line])


def _reach(config: Mapping[str, Any], revision: Revision, entry: str, line: int,
           environ: Mapping[str, str] | None) -> Reach:
    assert revision.root is not None
    started = setup_scope(config, revision, entry, environ)
    where = f"{entry.rsplit('.', 1)[-1]}.{SETUP}"
    if started is None:
        return Reach(None, f"{where} could not be read")
    tree, function, scope = started
    walk = _ReachWalk(function, scope, Path(revision.root), tree, line)
    try:
        walk.run()
    except (RecursionError, MemoryError):
        return Reach(None, f"{where} is nested too deeply to follow")
    return walk.found or Reach(None, f"{where} was not followed as far as line {line}")


class _ReachWalk(SizeWalk):
    """The world size's walk of a setup, on past the drivers it builds, to one line."""

    def __init__(self, function: Function, scope: Scope, root: Path, tree: SourceTree,
                 line: int) -> None:
        super().__init__(function, scope, root, frozenset(), tree, [])
        self.line = line
        self.found: Reach | None = None

    def _holds_line(self, node: ast.stmt) -> bool:
        return node.lineno <= self.line <= (node.end_lineno or node.lineno)

    def starts_workers(self, stmt: ast.stmt) -> bool:
        return False

    def statement(self, stmt: ast.stmt, guards: list[Branch], unsure: str | None) -> None:
        if self.found is not None or not self._holds_line(stmt):
            super().statement(stmt, guards, unsure)
            return
        if isinstance(stmt, ast.If) and unsure is None:
            holds = truth(self.evaluator().value(stmt.test))
            in_body = any(self._holds_line(s) for s in stmt.body)
            if holds is not None and holds != in_body:
                self._found(Reach(False))
                return
        if isinstance(stmt, _COMPOUND):
            super().statement(stmt, guards, unsure)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._found(Reach(None, f"line {self.line} is in a function {SETUP} defines, "
                                    "which this check does not follow"))
            return
        self._found(Reach(True) if unsure is None else Reach(None, unsure))

    def _found(self, reach: Reach) -> None:
        self.found = reach
        self.stopped = True


__all__ = ["Reach", "ThroughBuild", "through_builds"]
