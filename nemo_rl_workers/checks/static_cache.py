"""A cache of static verdicts (`check --static`, `verify --static`), never stale.

An entry is found by a key over everything the verdict depends on that is known before
the checker runs: the question (class, Protocol, base), the probe asked for it (which
holds the Protocol members' source), the checker (its executable, version and options),
the interpreter and its import path, the installed distributions, and this program's own
code. The entry holds the verdict and its *manifest*: every module the checker may
follow from the probe, with the file it resolves to and the sha256 of each file
(`static_inputs`). It is used only while every file still resolves and hashes the same.

An entry is a JSON file with a checksum over its payload, written through the one atomic
writer (`reading.atomic_write`; a symlink there is replaced, never written through), so a
reader sees a whole entry or none. One that
is unreadable, truncated, not a regular file, too large, or fails its checksum is
ignored and rewritten: the cache can only make a run faster, never change its verdict.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from nemo_rl_workers.checks import static_check
from nemo_rl_workers.checks.static_check import (
    ImportRoots,
    StaticFinding,
    StaticReport,
    StaticRule,
    Subject,
)
from nemo_rl_workers.checks.static_inputs import (
    Manifest,
    Resolver,
    file_digest,
    installed_fingerprint,
    read_manifest,
    still_valid,
)
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading import distributions
from nemo_rl_workers.reading.atomic_write import write_atomic

DEFAULT_CACHE_DIR = ".nemo-rl-workers-cache"
FORMAT = 1
MAX_ENTRY_BYTES = 8 * 1024 * 1024
_OWN_CODE = ("static_check.py", "static_inputs.py", "static_cache.py", "static_ancestry.py",
             "static_imports.py")


class CacheDirError(ValueError):
    """A cache folder that cannot be used: one line naming it and why."""


def _checksum(payload: object) -> str:
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, ensure_ascii=True).encode()
    ).hexdigest()


@dataclass(frozen=True)
class StaticCache:
    """Entries under `folder/v<FORMAT>/`; see the module's docstring."""

    folder: Path

    @classmethod
    def open(cls, folder: str | os.PathLike[str], *, create: bool = True) -> StaticCache:
        """The cache in `folder`, created now if missing (`create`), else when the first
        entry is stored; `CacheDirError` if it exists and cannot be used, or cannot be
        created."""
        shown = one_line(os.fspath(folder))  # a name may hold a newline
        if not shown:
            raise CacheDirError("the cache folder's name is empty")
        path = Path(folder)
        if path.exists() and not path.is_dir():
            raise CacheDirError(f"cache folder {shown} exists and is not a directory")
        cache = cls(path)
        if create or path.exists():
            try:
                cache._prepare()
                probe_fd, probe = tempfile.mkstemp(dir=cache._entries(), prefix=".write-test-")
                os.close(probe_fd)
                os.unlink(probe)
            except OSError as err:
                reason = err.strerror or type(err).__name__
                raise CacheDirError(f"cache folder {shown} cannot be used: {reason}") from err
        return cache

    def _entries(self) -> Path:
        return self.folder / f"v{FORMAT}"

    def _prepare(self) -> None:
        """The entries' folder, and the markers that tell backup tools and git to leave
        the cache alone (as pytest's cache does); OSError if they cannot be made."""
        self._entries().mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"),
                           (".gitignore", "*\n")):
            marker = self.folder / name
            if not os.path.lexists(marker):
                write_atomic(marker, text.encode("utf-8"), links="replace")

    def _entry(self, key: str) -> Path:
        return self._entries() / f"{key}.json"

    def judge(
        self,
        subjects: Sequence[Subject],
        protocols: Mapping[str, type],
        checker: str,
        search: Sequence[Path],
        python: str,
        roots: ImportRoots,
    ) -> list[StaticReport]:
        """`static_check._judge_located`, answering from this cache what it validly holds
        (static_check reaches it through this method, never importing this module)."""
        combined = _combined(roots)
        installed = installed_fingerprint(combined)
        keys = [cache_key(s, protocols, checker, python, combined, installed) for s in subjects]
        resolver = Resolver(combined)
        reports: dict[int, StaticReport] = {}
        for index, (subject, key) in enumerate(zip(subjects, keys, strict=True)):
            hit = _from_payload(subject, self.load(key), resolver)
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

    def load(self, key: str) -> dict[str, Any] | None:
        """The payload stored under `key`, or None for a missing or untrustworthy entry."""
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self._entry(key), flags)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        payload = entry.get("payload")
        if entry.get("key") != key or not isinstance(payload, dict):
            return None
        if entry.get("sha256") != _checksum(payload):
            return None
        return payload

    def store(self, key: str, payload: dict[str, Any]) -> None:
        """Write the entry whole or not at all; a full disk only costs the next run time."""
        entry = {"format": FORMAT, "key": key, "payload": payload, "sha256": _checksum(payload)}
        try:
            self._prepare()  # the default folder is made on the first entry stored
            write_atomic(self._entry(key), json.dumps(entry, ensure_ascii=True).encode(),
                         links="replace")
        except OSError:
            pass


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


@functools.cache
def _own_code() -> str:
    here = Path(__file__).parent
    files = [here / name for name in _OWN_CODE]
    # Where the import-path lookup lives (shared with audit's source model).
    lookup = sys.modules[static_check.locate.__module__].__file__
    if lookup is not None:
        files.append(Path(lookup))
    return ":".join(f"{file}={file_digest(file)}" for file in files)


def _combined(roots: ImportRoots) -> ImportRoots:
    """The class's interpreter's roots, then this one's (where the Protocols live)."""
    own = ImportRoots.of_this_interpreter()
    return ImportRoots(
        tuple(dict.fromkeys([*roots.paths, *own.paths])), {**own.mapped, **roots.mapped}
    )


def cache_key(
    subject: Subject,
    protocols: Mapping[str, type],
    checker: str,
    python: str,
    combined: ImportRoots,
    installed: str,
) -> str:
    """The key of the entry for `subject`; see the module's docstring."""
    probe = static_check._write_probe([subject], protocols).text()
    parts = {
        "format": FORMAT,
        "subject": [subject.fqn, subject.protocol, subject.base_fqn],
        "probe": probe,
        "checker": _checker_identity(checker),
        "options": [static_check.MYPY_CONFIG, list(static_check.PYREFLY_OPTIONS)],
        "python": [python, sys.executable, sys.version],
        "roots": [list(combined.paths), sorted(combined.mapped.items())],
        "installed": installed,
        "code": _own_code(),
    }
    return _checksum(parts)


def _start_modules(subject: Subject, protocols: Mapping[str, type]) -> list[str]:
    names = [subject.fqn.rpartition(".")[0], protocols[subject.protocol].__module__]
    if subject.base_fqn:
        names.append(subject.base_fqn.rpartition(".")[0])
    return [n for n in names if n]


def _from_payload(
    subject: Subject, payload: dict[str, Any] | None, resolver: Resolver
) -> StaticReport | None:
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
            return None
        if not all(isinstance(v, (str, type(None))) for v in
                   [*manifest.modules.values(), *manifest.files.values()]):
            return None
    except (KeyError, TypeError, ValueError):
        return None
    if not still_valid(manifest, resolver):
        return None
    return StaticReport(subject, findings)
