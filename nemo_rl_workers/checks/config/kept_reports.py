"""`check`'s whole verdict on one config, kept with the tree's model.

A cached `check` of a repository should cost what reading its answers costs, not what
judging costs: the entry walk, the suite script, the tree's rules and the world size are
each kept (`derived_answers`), but putting them together again still walked the entry
script and read the launch for every config. So the report itself is an answer of the
cache (`cache.key.Computation`), keyed by what the command was asked (the tree's model,
the installed libraries, the working folder and import path, the config as given, the
overrides, the flags and the launch), and kept with the record of everything judging it
read (`reading.recorded_reads`: the `defaults:` chain, the entry and suite scripts, the
paths whose presence chose them, the environment variables the tree's code and the
config's interpolations read). An entry is used only where each recorded thing reads the
same; otherwise the config is judged again and the entry replaced.

Not kept: a report of input that could not be used (its cause may be passing), one that
read the whole environment, and anything of a tree without a cache (`--no-cache`) or of
the reference.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nemo_rl_workers.cache.codec import encode
from nemo_rl_workers.cache.digest import DigestIndex
from nemo_rl_workers.cache.key import Computation, digest_of
from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.interpret.strict import strict_mode
from nemo_rl_workers.model.resolver import Resolution
from nemo_rl_workers.reading.recorded_reads import Reads, recording, replay, still_true
from nemo_rl_workers.tree.launch import Launch

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision


@dataclass(frozen=True)
class ReportInputs:
    model: str  # the tree model's key (its modules and this program's code)
    revision: str  # what the revision says beyond the model: its folder, commit, vLLM pin
    libraries: str  # the installed distributions
    folder: str  # the working folder: a path as given is read from it
    path: tuple[str, ...]  # the import path: where a class outside the tree is looked up
    config: str  # the config as given
    arguments: str  # JSON: the overrides, the flags and the launch


@dataclass(frozen=True)
class StoredReport:
    """A `ConfigReport` as kept: every field but the config (an input), the revision (the
    one judged against) and the lines about cache entries (said by the run that met them)."""

    workers: tuple[Resolution, ...]
    problems: tuple[Problem, ...]
    warnings: tuple[str, ...]
    skipped: tuple[str, ...]
    revision_notes: tuple[str, ...]
    unusable: str | None
    world_size: int | None
    world_size_from: str | None
    lines: Mapping[str, tuple[str, int]]
    defaults_line: int | None
    entry: str | None
    entry_path: str | None
    launch_script: str | None
    suite: Launch | None
    judged: bool


NOT_KEPT = frozenset({"config", "revision", "cache_notes"})


@dataclass(frozen=True)
class KeptReport:
    report: StoredReport
    files: tuple[tuple[str, int, str], ...]  # (path, size limit, digest)
    kinds: tuple[tuple[str, str], ...]  # (path, what it was)
    listings: tuple[tuple[str, str], ...]  # (folder, digest of its names)
    environ: Mapping[str, str | None]
    redacted: tuple[str, ...]  # variables read through `${oc.env:...}`: hidden when shown


CHECK_REPORT = Computation("check-report", ReportInputs, KeptReport, "verdict")


@dataclass(frozen=True)
class Asked:
    """What `analyze_file` was asked, beside the config and the tree."""

    overrides: tuple[str, ...]
    world_size: int | None
    verify: bool
    preflight: bool
    world_size_from_config: bool
    only_read_env: bool
    launch: Launch | None


def kept_report(config: str, asked: Asked, revision: Revision | None,
                judge: Callable[[], ConfigReport]) -> ConfigReport:
    """The report on `config`: kept where everything it read reads the same, else
    `judge()`'s, kept for the next run (see the module docstring)."""
    store = revision.answers if revision is not None else None
    if revision is None or revision.is_reference or revision.key is None or store is None \
            or revision.root is None:
        return judge()
    from nemo_rl_workers.checks.config.derived_answers import installed_libraries

    try:
        folder = os.getcwd()
    except OSError:  # the working folder was removed: a path as given names nothing sure
        return judge()
    inputs = ReportInputs(
        model=revision.key, revision=_revision_digest(revision), libraries=installed_libraries(),
        folder=folder, path=tuple(sys.path), config=config,
        arguments=json.dumps([encode(asked), strict_mode()], sort_keys=True))
    got = store.get(CHECK_REPORT, inputs)
    if got.payload is not None:
        reads = _reads(got.payload)
        if still_true(reads, _digest):
            replay(reads)
            if got.payload.redacted:
                from nemo_rl_workers.reading.interpolation import remember_environ

                for name in got.payload.redacted:
                    remember_environ(name)
            return _report(config, got.payload.report, revision)
    with recording() as reads:
        report = judge()
    if got.ignored is not None:
        report.cache_notes.append(
            f"cache entry {store.describe(CHECK_REPORT.key(inputs))} {got.ignored}; "
            "ignored, the config is judged again")
    if report.unusable is None and not reads.whole_environ:
        store.put(CHECK_REPORT, inputs, KeptReport(
            _stored(report),
            tuple((path, limit, digest) for path, (limit, digest) in reads.files.items()),
            tuple(reads.kinds.items()), tuple(reads.listings.items()), dict(reads.environ),
            tuple(reads.redacted)))
    return report


# The digest of each revision judged against in this process (the revision kept alive
# beside it, so its id names no other).
_REVISIONS: dict[int, tuple[Revision, str]] = {}


def _revision_digest(revision: Revision) -> str:
    """The digest of everything the revision says (read afresh on every run: the commit
    every report names, the vLLM pin), once per revision."""
    kept = _REVISIONS.get(id(revision))
    if kept is None or kept[0] is not revision:
        kept = (revision, digest_of(encode(revision)))
        if len(_REVISIONS) >= 8:  # a command judges against one or two; a test process, many
            _REVISIONS.clear()
        _REVISIONS[id(revision)] = kept
    return kept[1]


def _stored(r: ConfigReport) -> StoredReport:
    return StoredReport(
        tuple(r.workers), tuple(r.problems), tuple(r.warnings), tuple(r.skipped),
        tuple(r.revision_notes), r.unusable, r.world_size, r.world_size_from, dict(r.lines),
        r.defaults_line, r.entry, r.entry_path, r.launch_script, r.suite, r.judged)


def _report(config: str, s: StoredReport, revision: Revision) -> ConfigReport:
    return ConfigReport(
        config=config, revision=revision, workers=list(s.workers), problems=list(s.problems),
        warnings=list(s.warnings), skipped=list(s.skipped),
        revision_notes=list(s.revision_notes), unusable=s.unusable, world_size=s.world_size,
        world_size_from=s.world_size_from, lines=dict(s.lines), defaults_line=s.defaults_line,
        entry=s.entry, entry_path=s.entry_path, launch_script=s.launch_script, suite=s.suite,
        judged=s.judged)


def _reads(kept: KeptReport) -> Reads:
    return Reads(files={path: (limit, digest) for path, limit, digest in kept.files},
                 kinds=dict(kept.kinds), listings=dict(kept.listings),
                 environ=dict(kept.environ))


# The digests of the files reports read, by their stat, within one process (the stat
# index the tree model uses, kept in memory only): the entry script of most configs is the
# same file, hashed once.
_INDEX = DigestIndex(None, "kept reports")


def _digest(path: str, limit: int) -> str:
    return _INDEX.digest(Path(path), limit)
