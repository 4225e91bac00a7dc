"""A cache of static verdicts (`check --static`, `verify --static`), never stale.

An entry is found by a key over everything the verdict depends on that is known before
the checker runs: the question (class, Protocol, base), the probe asked for it (which
holds the Protocol members' source), the checker (its executable, version and options),
the interpreter and its import path, the folders the checker is told to search (those of
every class of its run), the installed distributions, and this program's own code and
module size cap (`tree.content_key.content_key`, the digest every cache keys by). The
entry holds the verdict and its *manifest*: every module the checker may follow from the
probe, with the file it resolves to and the sha256 of each file
(`static_inputs`). It is used only while every file still resolves and hashes the same.

Entries are the tool's content cache's (`nemo_rl_workers.tree.cache`): checksummed JSON,
written whole, ignored and rewritten when damaged; the cache can only make a run faster,
never change its verdict.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from nemo_rl_workers.checks import static_check
from nemo_rl_workers.checks.static_check import (
    ImportRoots,
    ProtocolSpec,
    ProtocolText,
    StaticFinding,
    StaticReport,
    StaticRule,
    Subject,
)
from nemo_rl_workers.checks.static_inputs import (
    Manifest,
    Resolver,
    installed_fingerprint,
    read_manifest,
    still_valid,
)
from nemo_rl_workers.reading import distributions
from nemo_rl_workers.tree.cache import (
    DEFAULT_CACHE_DIR,
    FORMAT,
    MAX_ENTRY_BYTES,
    CacheDirError,
    ContentCache,
    checksum,
)
from nemo_rl_workers.tree.content_key import content_key

__all__ = ["DEFAULT_CACHE_DIR", "FORMAT", "MAX_ENTRY_BYTES", "CacheDirError", "StaticCache"]


@dataclass(frozen=True)
class StaticCache(ContentCache):
    """Static verdicts as entries of the tool's content cache; see the module's docstring.
    Lines about entries not trusted (damaged, not of their type) gather in `notes`."""

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
        """`static_check._judge_located`, answering from this cache what it validly holds
        (static_check reaches it through this method, never importing this module)."""
        combined = _combined(roots)
        shared = run_key(checker, python, combined, installed_fingerprint(combined), search)
        keys = [cache_key(shared, s, protocols) for s in subjects]
        resolver = Resolver(combined)
        reports: dict[int, StaticReport] = {}
        for index, (subject, key) in enumerate(zip(subjects, keys, strict=True)):
            loaded = self.load_entry(key)
            why = loaded.ignored
            try:
                hit = _from_payload(subject, loaded.payload, resolver)
            except BadEntry as bad:
                hit, why = None, f"holds a damaged verdict ({bad})"
            if why is not None:
                self.notes.append(f"cache entry {self.describe(key)} {why}; ignored, "
                                  f"{subject.fqn} is judged again")
            if hit is not None:
                reports[index] = hit
        missing = [i for i in range(len(subjects)) if i not in reports]
        if missing:
            # The manifest is read before the checker runs: a file edited meanwhile then
            # fails validation next time instead of being recorded with its new bytes.
            manifests = {i: read_manifest(_start_modules(subjects[i], protocols), resolver)
                         for i in missing}
            fresh = static_check._judge_located(
                [subjects[i] for i in missing], protocols, checker, search, python, roots
            )
            for i, report in zip(missing, fresh, strict=True):
                reports[i] = report
                if report.unusable is None:  # a checker that did not run is no verdict
                    self.store(keys[i], {
                        "findings": [[f.member, f.rule, f.message] for f in report.findings],
                        "manifest": manifests[i].as_json(),
                    })
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


def run_key(checker: str, python: str, combined: ImportRoots, installed: str,
            search: Sequence[Path]) -> str:
    """What the keys of every subject of one checker run share (see the module's
    docstring): `search` holds the folders the checker is told to search, those of every
    subject of the run."""
    parts = {
        "checker": _checker_identity(checker),
        "options": [static_check.MYPY_CONFIG, list(static_check.PYREFLY_OPTIONS)],
        "python": [python, sys.executable],
        "roots": [list(combined.paths), sorted(combined.mapped.items())],
        "search": [str(p) for p in search],
        "installed": installed,
    }
    return content_key("static-verdict", json.dumps(parts, sort_keys=True), ())


def cache_key(shared: str, subject: Subject, protocols: Mapping[str, ProtocolSpec]) -> str:
    """The key of the entry for `subject` in a run whose `run_key` is `shared`."""
    probe = static_check._write_probe([subject], protocols).text()
    return checksum({"run": shared, "subject": [subject.fqn, subject.protocol,
                                                subject.base_fqn], "probe": probe})


def _start_modules(subject: Subject, protocols: Mapping[str, ProtocolSpec]) -> list[str]:
    protocol = protocols[subject.protocol]
    names = [subject.fqn.rpartition(".")[0], *(
        protocol.modules() if isinstance(protocol, ProtocolText) else [protocol.__module__])]
    if subject.base_fqn:
        names.append(subject.base_fqn.rpartition(".")[0])
    return [n for n in names if n]


class BadEntry(ValueError):
    """A stored verdict that is not what `judge` writes (its checksum may hold)."""


def _from_payload(
    subject: Subject, payload: dict[str, Any] | None, resolver: Resolver
) -> StaticReport | None:
    """The stored verdict; None where there is none or what it read has changed since
    (stale: not a damaged entry); BadEntry for one that is not of its type."""
    if payload is None:
        return None
    try:
        raw_manifest = payload["manifest"]
        manifest = Manifest(dict(raw_manifest["modules"]), dict(raw_manifest["files"]))
        findings = tuple(
            StaticFinding(str(member), rule, str(message))
            for member, rule, message in payload["findings"]
            if rule in get_args(StaticRule)
        )
        if len(findings) != len(payload["findings"]):
            raise BadEntry("a finding of an unknown rule")
        if not all(isinstance(v, (str, type(None))) for v in
                   [*manifest.modules.values(), *manifest.files.values()]):
            raise BadEntry("a manifest of another shape")
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, BadEntry):
            raise
        raise BadEntry(f"{type(error).__name__} reading it") from error
    if not still_valid(manifest, resolver):
        return None
    return StaticReport(subject, findings)
