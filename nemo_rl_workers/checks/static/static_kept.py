"""Static verdicts (`check --static`, `verify --static`) kept in the cache, never stale.

A verdict is the computation `STATIC_VERDICT`, keyed by its inputs known before the
checker runs (`VerdictInputs`): the question (class, Protocol, base), the probe asked for
it (which holds the Protocol members' source), and what every subject of one checker run
shares (`RunInputs`: the checker's executable, version and options, the interpreter and
its import path, the folders the checker is told to search, the installed distributions,
this program's code). The entry holds the verdict and its *manifest*: every module the
checker may follow from the probe, with the file it resolves to and the digest of each
file (`static_inputs`). It is used only while every file still resolves and hashes the
same. Entries are the store's (`cache.store`): checksummed, written whole, ignored and
rewritten when damaged; the cache can only make a run faster, never change a verdict.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.cache.digest import program_digest
from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.checks.static import static_check
from nemo_rl_workers.checks.static.static_check import (
    ImportRoots,
    ProtocolSpec,
    ProtocolText,
    StaticFinding,
    StaticReport,
    Subject,
)
from nemo_rl_workers.checks.static.static_inputs import (
    Manifest,
    Resolver,
    installed_fingerprint,
    read_manifest,
    still_valid,
)
from nemo_rl_workers.reading import distributions
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES


@dataclass(frozen=True)
class RunInputs:
    """What the verdicts of every subject of one checker run depend on alike."""

    checker: str  # the executable, its stamp and version
    options: tuple[str, tuple[str, ...]]  # mypy's configuration, pyrefly's options
    python: tuple[str, str]  # the class's interpreter, this one
    roots: ImportRoots  # the class's interpreter's, then this one's
    search: tuple[str, ...]  # the folders the checker is told to search
    installed: str  # the installed distributions (`installed_fingerprint`)
    program: str  # this program's code and interpreter


@dataclass(frozen=True)
class VerdictInputs:
    run: RunInputs
    subject: Subject
    probe: str  # the probe's text: the Protocol members' source


@dataclass(frozen=True)
class KeptVerdict:
    findings: tuple[StaticFinding, ...]
    manifest: Manifest  # what the checker may have read, and each file's digest


STATIC_VERDICT = Computation("static-verdict", VerdictInputs, KeptVerdict, "verdict")


@dataclass(frozen=True)
class KeptVerdicts:
    """Static verdicts in `store`; see the module's docstring. Lines about entries not
    trusted (damaged, not of their type) gather in `notes`."""

    store: Store
    notes: list[str] = field(default_factory=list, compare=False)

    def judge(
        self,
        subjects: Sequence[Subject],
        protocols: Mapping[str, ProtocolSpec],
        checker: str,
        search: Sequence[Path],
        python: str,
        roots: ImportRoots,
    ) -> list[StaticReport]:
        """`static_check.judge_located`, answering from the store what it validly holds
        (static_check reaches it through this method, never importing this module)."""
        combined = _combined(roots)
        run = run_inputs(checker, python, combined, installed_fingerprint(combined), search)
        asked = [verdict_inputs(run, s, protocols) for s in subjects]
        resolver = Resolver(combined)
        reports: dict[int, StaticReport] = {}
        for index, (subject, inputs) in enumerate(zip(subjects, asked, strict=True)):
            got = self.store.get(STATIC_VERDICT, inputs)
            if got.ignored is not None:
                self.notes.append(
                    f"cache entry {self.store.describe(STATIC_VERDICT.key(inputs))} "
                    f"{got.ignored}; ignored, {subject.fqn} is judged again")
            if got.payload is not None and still_valid(got.payload.manifest, resolver):
                reports[index] = StaticReport(subject, got.payload.findings)
        missing = [i for i in range(len(subjects)) if i not in reports]
        if missing:
            # The manifest is read before the checker runs: a file edited meanwhile then
            # fails validation next time instead of being recorded with its new bytes.
            manifests = {i: read_manifest(_start_modules(subjects[i], protocols), resolver)
                         for i in missing}
            fresh = static_check.judge_located(
                [subjects[i] for i in missing], protocols, checker, search, python, roots
            )
            for i, report in zip(missing, fresh, strict=True):
                reports[i] = report
                if report.unusable is None:  # a checker that did not run is no verdict
                    self.store.put(STATIC_VERDICT, asked[i],
                                   KeptVerdict(report.findings, manifests[i]))
        return [reports[i] for i in range(len(subjects))]


@functools.cache
def _checker_identity(checker: str) -> str:
    """The executable and its version, without running it where metadata tells."""
    exe = static_check.checker_command(checker)
    if exe is None:
        return f"{checker}:missing"
    try:
        info = os.stat(exe)
        stamp = f"{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        stamp = "-"
    version = distributions.version(checker) or "?"
    return f"{checker}:{exe}:{stamp}:{version}"


def _combined(roots: ImportRoots) -> ImportRoots:
    """The class's interpreter's roots, then this one's (where the Protocols live)."""
    own = ImportRoots.of_this_interpreter()
    return ImportRoots(
        tuple(dict.fromkeys([*roots.paths, *own.paths])), {**own.mapped, **roots.mapped}
    )


def run_inputs(checker: str, python: str, combined: ImportRoots, installed: str,
               search: Sequence[Path]) -> RunInputs:
    """What the keys of every subject of one checker run share: `search` holds the
    folders the checker is told to search, those of every subject of the run."""
    return RunInputs(
        checker=_checker_identity(checker),
        options=(static_check.MYPY_CONFIG, tuple(static_check.PYREFLY_OPTIONS)),
        python=(python, sys.executable),
        roots=ImportRoots(combined.paths, dict(sorted(combined.mapped.items()))),
        search=tuple(str(p) for p in search),
        installed=installed,
        program=program_digest(MAX_SOURCE_BYTES),
    )


def verdict_inputs(run: RunInputs, subject: Subject,
                   protocols: Mapping[str, ProtocolSpec]) -> VerdictInputs:
    """The inputs of `subject`'s verdict in a run of `run`."""
    probe = static_check.write_probe([subject], protocols).text()
    return VerdictInputs(run, subject, probe)


def _start_modules(subject: Subject, protocols: Mapping[str, ProtocolSpec]) -> list[str]:
    protocol = protocols[subject.protocol]
    names = [subject.fqn.rpartition(".")[0], *(
        protocol.modules() if isinstance(protocol, ProtocolText) else [protocol.__module__])]
    if subject.base_fqn:
        names.append(subject.base_fqn.rpartition(".")[0])
    return [n for n in names if n]
