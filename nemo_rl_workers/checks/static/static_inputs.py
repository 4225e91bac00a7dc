"""Every file a static verdict depends on, for keying its cache entry (`static_kept`).

The checker reads the probe, the class's module and everything it imports, the Protocols'
modules and theirs, stubs (`.pyi` beside a module, `<name>-stubs` packages), and the
installed packages. This module finds the same set without running anything: starting
from the probe's imports, it parses each module's imports (all of them, also under
`if TYPE_CHECKING:` and inside functions) and resolves them with `static_check.locate`,
as the checker would. It is conservative: it follows more than the checker may. Each
module is read as `static_imports` reads it: bounded, so one over the cap is never parsed.

Files under a `site-packages` folder are not walked (torch alone is thousands of files):
each installed distribution is keyed by its `RECORD` file instead (pip rewrites it on
every install, upgrade or removal), so installing another version changes the key;
editing an installed file in place does not (the guide says so). Each file is keyed by
the one file digest (`cache.digest.file_digest`), read through the guarded reader up to
`MAX_INPUT_BYTES`: a larger one is keyed by its refusal.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.cache.digest import file_digest
from nemo_rl_workers.checks.static.static_check import ImportRoots, Located, locate
from nemo_rl_workers.checks.static.static_imports import with_parents
from nemo_rl_workers.tree.source.lookup import RootListing
from nemo_rl_workers.tree.source.outline import module_imports

_STDLIB = set(sys.stdlib_module_names) | {"__future__"}
MAX_INPUT_BYTES = 64 * 1024 * 1024


def _installed(path: Path) -> bool:
    return any(part.endswith("-packages") for part in path.parts)


@dataclass
class Manifest:
    """What one verdict read: module name -> its file (None when unresolved), and
    file -> its digest (`file_digest`: "refused:<why>" for one the reader refuses)."""

    modules: dict[str, str | None] = field(default_factory=dict)
    files: dict[str, str | None] = field(default_factory=dict)

    def as_json(self) -> dict[str, dict[str, str | None]]:
        return {"modules": dict(sorted(self.modules.items())),
                "files": dict(sorted(self.files.items()))}


class Resolver:
    """Resolves modules to the files a checker may read for them, remembering each
    answer for one run (many subjects share most of their modules)."""

    def __init__(self, roots: ImportRoots) -> None:
        self.roots = roots
        self.listing = RootListing()
        self._files: dict[str, tuple[str | None, list[Path]]] = {}
        self._stubs: dict[str, list[Path]] = {}
        self._digests: dict[str, str | None] = {}

    def _stub_files(self, top: str) -> list[Path]:
        """Stubs a checker prefers to the module's source: `<top>-stubs` packages and
        `<top>.pyi` files on the path (installed ones are keyed by their RECORD)."""
        if top not in self._stubs:
            found: list[Path] = []
            for entry in self.roots.paths:
                base = Path(entry)
                stubs = base / f"{top}-stubs"
                if stubs.is_dir() and not _installed(stubs):
                    found.extend(sorted(stubs.rglob("*.pyi")))
                single = base / f"{top}.pyi"
                if single.is_file() and not _installed(single):
                    found.append(single)
            self._stubs[top] = found
        return self._stubs[top]

    def files_of(self, name: str) -> tuple[str | None, list[Path]]:
        """Where `name` resolves, and the files a checker may read for it (its source, a
        `.pyi` beside it, stub packages, its package's `py.typed`); stats only."""
        if name not in self._files:
            top = name.split(".")[0]
            found = locate(name, self.roots, self.listing)
            files = list(self._stub_files(top))
            where: str | None = None
            if isinstance(found, Located):
                where = str(found.file)
                files.append(found.file)
                beside = found.file.with_suffix(".pyi")
                if beside.is_file():
                    files.append(beside)
                typed = found.root / top / "py.typed"
                if typed.is_file():
                    files.append(typed)
            self._files[name] = (where, [f for f in files if not _installed(f)])
        return self._files[name]

    def digest(self, file: str) -> str | None:
        if file not in self._digests:
            self._digests[file] = file_digest(Path(file), MAX_INPUT_BYTES)
        return self._digests[file]


def read_manifest(start: Iterable[str], resolver: Resolver) -> Manifest:
    """The modules reachable from `start` and the digests of their files."""
    manifest = Manifest()
    todo = [n for name in start for n in with_parents(name)]
    while todo:
        name = todo.pop()
        if name in manifest.modules or name.split(".")[0] in _STDLIB:
            continue
        manifest.modules[name], files = resolver.files_of(name)
        for file in files:
            key = str(file)
            if key in manifest.files:
                continue
            manifest.files[key] = resolver.digest(key)
            if file.suffix in (".py", ".pyi"):
                todo.extend(n for imported in module_imports(file, name)
                            for n in with_parents(imported))
    return manifest


def still_valid(manifest: Manifest, resolver: Resolver) -> bool:
    """Whether every module still resolves to the same files, each holding the same
    bytes: then the import graph, a function of both, is the same too."""
    for name, file in manifest.modules.items():
        now, files = resolver.files_of(name)
        if now != file or any(str(f) not in manifest.files for f in files):
            return False
    return all(resolver.digest(name) == digest for name, digest in manifest.files.items())


def installed_fingerprint(roots: ImportRoots) -> str:
    """Every installed distribution on the import path, by its RECORD's identity, and
    every `.pth` file (they add folders to the path)."""
    digest = hashlib.sha256()
    for entry in sorted(set(roots.paths)):
        base = Path(entry)
        if not _installed(base) or not base.is_dir():
            continue
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                record = base / name / ("RECORD" if name.endswith(".dist-info") else "SOURCES.txt")
                try:
                    info = record.stat()
                    stamp = f"{info.st_size}:{info.st_mtime_ns}"
                except OSError:
                    stamp = "-"
                digest.update(f"{entry}/{name}={stamp}\n".encode())
            elif name.endswith(".pth"):
                digest.update(f"{entry}/{name}={file_digest(base / name, MAX_INPUT_BYTES)}\n"
                              .encode())
    return digest.hexdigest()
