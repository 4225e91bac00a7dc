"""File safety for `migrate`: reading through the guarded reader, knowing whether a file is
still what was read, refusing to follow a symlink out of the folders given, names the system
refuses and bounded folder walks; files are replaced through `atomic_write`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nemo_rl_workers.reading.atomic_write import write_atomic as write_atomic
from nemo_rl_workers.reading.safe_read import ConfigLoadError, decode, read_bytes
from nemo_rl_workers.reading.yaml_edits import MigrationError

CONFIG_SUFFIXES = (".yaml", ".yml")
"""Files picked up when a folder is given."""

Status = Literal["changed", "unchanged", "error"]


@dataclass(frozen=True)
class FileReport:
    """What migrating one file did or would do."""

    path: Path
    status: Status
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    original: bytes = b""
    text: str | None = None  # the migrated text, when changed
    outdated_parents: tuple[Path, ...] = ()
    identity: Identity | None = None  # of the file as read: replaced only while unchanged

    def new_bytes(self) -> bytes:
        """The bytes the file holds after migration (the original ones when unchanged)."""
        return self.original if self.text is None else self.text.encode("utf-8")


BOM = "\ufeff"


def read_guarded(path: Path) -> tuple[bytes, str]:
    """Through the loader's guarded reader: regular files only, bounded size, no FIFO wait."""
    try:
        raw = read_bytes(path, str(path))
        return raw, decode(raw, str(path))
    except ConfigLoadError as e:
        raise MigrationError(e.reason) from e


Identity = tuple[int, int, int, int]
"""(device, inode, size, modification time in ns) of a file."""


def identity_of(path: Path) -> Identity | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def replace_refusal(report: FileReport, roots: Sequence[Path], named: set[Path]) -> str | None:
    """Why `report.path` must not be replaced in place now, or None when it may be.

    It must still be the file that was read (same inode, size, time and bytes: an edit or a
    deletion made since is never overwritten or undone), and its real path must be a file
    named on the command line or lie inside a folder that was (a symlink is never followed
    out of the given roots).
    """
    real = real_path(report.path)
    if real not in named and not any(real.is_relative_to(root) for root in roots):
        return f"is a symlink to {real}, outside the folders given; not rewritten"
    now = identity_of(report.path)
    if now is None:
        return "vanished since it was read; not recreated"
    try:
        same = now == report.identity and read_guarded(report.path)[0] == report.original
    except MigrationError:
        same = False
    if not same:
        return "changed since it was read; not rewritten (run migrate again)"
    return None


def real_path(path: Path) -> Path:
    """`path.resolve()`; a symlink loop stays as written (reading it then fails, one line)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in the name
        return Path(os.path.abspath(path))


def is_dir(path: Path) -> bool:
    """`path.is_dir()`, False where the system refuses the name (too long, a NUL): reading
    the file then reports why, one line, instead of an OSError escaping."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def is_symlink(path: Path) -> bool:
    try:
        return path.is_symlink()
    except (OSError, ValueError):
        return False


MAX_FOLDER_ENTRIES = 100_000
"""Entries `migrate FOLDER` looks at before refusing the folder as too big to be a config tree."""


def config_files(folder: Path) -> list[Path]:
    """*.yaml / *.yml regular files under `folder`, sorted; dot-files and dot-folders
    (`.github/`, `.pre-commit-config.yaml`) skipped, symlinked folders not entered (no
    loop), unreadable ones skipped, and at most MAX_FOLDER_ENTRIES entries looked at (a
    link to `/` must not walk the whole machine). `migrate` and `check` share it."""
    found: list[Path] = []
    seen = 0
    for top, dirs, names in os.walk(folder):
        seen += len(dirs) + len(names)
        if seen > MAX_FOLDER_ENTRIES:
            raise MigrationError(
                f"{folder} holds over {MAX_FOLDER_ENTRIES} entries; name the config files"
            )
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = Path(top) / name
            if path.suffix in CONFIG_SUFFIXES and is_file(path):
                found.append(path)
    return sorted(found)


def expand_inputs(paths: Iterable[Path]) -> list[tuple[Path, Path]]:
    """(file, base) pairs: a folder stands for its *.yaml / *.yml files, found recursively.

    `base` is what the file's name is taken relative to when mirroring into an output folder.
    """
    files: dict[Path, tuple[Path, Path]] = {}  # by real path: a file named twice runs once
    for path in paths:
        if is_dir(path):
            pairs = [(p, path) for p in config_files(path)]
        else:
            pairs = [(path, path.parent)]
        for file, base in pairs:
            files.setdefault(real_path(file), (file, base))
    return list(files.values())
