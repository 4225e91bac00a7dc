"""Where a module's source lives, found as the import system would, importing nothing.

Shared by `verify --static` (nemo_rl_workers.checks.static.static_check) and `audit`: the folders an
interpreter imports from (`sys.path`, and the folders editable installs map packages
to), and `locate`, which walks them for a module's file without executing any module
or package `__init__` (importlib's `find_spec` would).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.reading.recorded_reads import FILE, FOLDER, is_recording, kind_of, note_listing


def _describe_import_path() -> dict[str, object]:
    """This interpreter's `sys.path` and editable-install maps; reads, never imports."""
    import sys

    mapped: dict[str, str] = {}
    for finder in sys.meta_path:
        # setuptools' editable finders keep {top-level package: folder} in MAPPING.
        module = sys.modules.get(getattr(finder, "__module__", "") or "")
        mapping = getattr(module, "MAPPING", None)
        if isinstance(mapping, dict):
            mapped.update({str(k): str(v) for k, v in mapping.items()})
    return {"paths": list(sys.path), "mapped": mapped}


@dataclass(frozen=True)
class ImportRoots:
    """Where an interpreter finds modules: its `sys.path`, and editable installs' maps."""

    paths: tuple[str, ...]
    # Top-level package -> its folder, from setuptools' editable-install finders.
    mapped: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of_this_interpreter(cls) -> ImportRoots:
        return cls._from_json(json.dumps(_describe_import_path()))

    @classmethod
    def of(cls, python: str) -> ImportRoots | str:
        """The roots of another interpreter, or why they cannot be known."""
        if python == sys.executable:
            return cls.of_this_interpreter()
        script = (
            inspect.getsource(_describe_import_path)
            + "\nimport json\nprint(json.dumps(_describe_import_path()))\n"
        )
        try:
            done = subprocess.run(
                [python, "-c", script],
                capture_output=True, text=True, timeout=60, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"cannot run {python}: {err}"
        if done.returncode != 0:
            return f"{python} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"
        return cls._from_json(done.stdout)

    def searched_first(self, folders: Sequence[str]) -> ImportRoots:
        """These roots with `folders` ahead of them; an editable install's map of a
        top-level name those folders hold no longer wins over them."""
        first = tuple(os.path.abspath(f) for f in folders)
        held = {name for f in first for name in _names(f)}
        mapped = {top: where for top, where in self.mapped.items() if top not in held}
        return ImportRoots((*first, *self.paths), mapped)

    @classmethod
    def _from_json(cls, text: str) -> ImportRoots:
        raw = json.loads(text)
        paths = tuple(os.path.abspath(p or os.curdir) for p in raw["paths"])
        return cls(paths, dict(raw["mapped"]))


@dataclass(frozen=True)
class Located:
    """A module's source file and the folder its top-level package is imported from."""

    module: str
    file: Path
    root: Path


def _names(folder: str) -> set[str]:
    """The top-level module and package names in a folder."""
    try:
        return {name.removesuffix(".py") for name in os.listdir(folder)}
    except OSError:
        return set()


class RootListing:
    """The names in each import root, listed once: `locate` then stats only the roots that
    hold the module's top-level name (a run that locates hundreds of modules over a dozen
    roots would otherwise stat each root for each). For one run: it does not see files
    created after it listed a root."""

    def __init__(self) -> None:
        self._names: dict[str, frozenset[str] | None] = {}

    def may_hold(self, entry: str, top: str) -> bool:
        if entry not in self._names:
            try:
                self._names[entry] = frozenset(os.listdir(entry))
            except OSError:  # not a folder (a zip on the path), unreadable: stat as before
                self._names[entry] = None
        names = self._names[entry]
        if names is not None and is_recording():  # listed once, recorded on each use
            note_listing(entry, names)
        return names is None or top in names or f"{top}.py" in names


def locate(module: str, roots: ImportRoots, listing: RootListing | None = None) -> Located | str:
    """The source of `module`, found as the import system would, or why not.

    Only files and folders are looked at; nothing is executed (importlib's
    `find_spec` would run every parent package's `__init__`). `listing`: the roots'
    names, when many modules are located in one run.
    """
    top, *rest = module.split(".")
    candidates: list[tuple[Path, Path]] = []  # (folder or file, root)
    if top in roots.mapped:
        mapped = Path(roots.mapped[top])
        candidates.append((mapped, mapped.parent))
    portions: list[tuple[Path, Path]] = []  # namespace package folders, tried last
    for entry in roots.paths:
        if listing is not None and not listing.may_hold(entry, top):
            continue
        # os.path on strings: this runs for every module of every run (pathlib is slower).
        folder = os.path.join(entry, top)
        if kind_of(os.path.join(folder, "__init__.py")) == FILE:
            candidates.append((Path(folder), Path(entry)))
        elif kind_of(f"{folder}.py") == FILE:
            candidates.append((Path(f"{folder}.py"), Path(entry)))
        elif kind_of(folder) == FOLDER:
            portions.append((Path(folder), Path(entry)))
    candidates += portions
    for start, root in candidates:
        found = _descend(start, rest)
        if found is not None:
            return Located(module, found, root)
    if not candidates:
        return f"no folder on the import path has a module or package named {top!r}"
    return f"no source file for {module} (looked in {', '.join(str(c) for c, _ in candidates)})"


def _descend(start: Path, parts: Sequence[str]) -> Path | None:
    here = str(start)
    for part in parts:
        if kind_of(here) != FOLDER:
            return None
        here = os.path.join(here, part)
        if kind_of(here) != FOLDER and kind_of(f"{here}.py") == FILE:
            here = f"{here}.py"
    if kind_of(here) == FOLDER:
        init = os.path.join(here, "__init__.py")
        return Path(init) if kind_of(init) == FILE else None
    return Path(here) if here.endswith(".py") and kind_of(here) == FILE else None
