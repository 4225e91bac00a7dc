"""Finding and reading a source tree's Python files, guarded as every input the project reads.

A tree is untrusted input: a file may be a FIFO, a device, a symlink into a loop or out of
the tree, huge, or not UTF-8. `discover` walks the tree without following directory
symlinks (so a loop cannot make it walk forever) or any symlink out of the tree (a
package linked to `/` is one problem, not a walk of the machine), and `read_source` reads
each file with
`nemo_rl_workers.reading.guarded_file`, as configs are read (non-blocking, regular files
only, bounded size). What cannot be read is a `SourceProblem`, never an exception.
"""

from __future__ import annotations

import io
import os
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, os_reason, read_regular
from nemo_rl_workers.reading.recorded_reads import note_listing

MAX_SOURCE_ENV = "NEMO_RL_WORKERS_MAX_MODULE_MIB"
"""Raises (or lowers) the size cap of one module, in MiB (the guide's "Reading a tree")."""


def _max_source_bytes() -> int:
    given = os.environ.get(MAX_SOURCE_ENV, "")
    if given.isdigit() and 0 < len(given) <= 6:
        return int(given) * 1024 * 1024
    return 8 * 1024 * 1024


MAX_SOURCE_BYTES = _max_source_bytes()
"""A module larger than this is recorded as a problem and not parsed: the model of a
module costs about 100 MB of memory per MiB of source, so the 8 MiB default keeps one
command under 1 GB."""
MAX_FILES = 50_000
"""At most this many Python files are read from one tree."""
SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class SourceProblem:
    """Why one file (or the tree) could not be read or parsed, in one sentence."""

    file: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


def discover(root: Path, problems: list[SourceProblem],
             boundary: Path | None = None) -> Iterator[Path]:
    """The tree's `.py`/`.pyi` files in a stable order. Nothing outside `boundary` (the
    tree's own folder; default `root`) is followed: a directory symlink is not entered,
    and a start folder or a file that is a symlink out of it is recorded in `problems`,
    as is an unreadable folder."""
    inside = _realpath(boundary if boundary is not None else root)
    if root.is_symlink():
        target = _realpath(root)
        if inside is None or target is None or not _within(target, inside):
            problems.append(SourceProblem(str(root), _outside(root)))
            return
    count = 0
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as err:
            problems.append(SourceProblem(str(folder), os_reason(err)))
            continue
        note_listing(folder, (entry.name for entry in entries))
        subfolders: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if not entry.name.startswith(".") and entry.name != "__pycache__":
                    subfolders.append(Path(entry.path))
            elif entry.name.endswith(SUFFIXES):
                if entry.is_symlink():
                    target = _realpath(Path(entry.path))
                    if inside is None or target is None or not _within(target, inside):
                        problems.append(SourceProblem(entry.path, _outside(Path(entry.path))))
                        continue
                count += 1
                if count > MAX_FILES:
                    problems.append(SourceProblem(
                        str(root), f"has more than {MAX_FILES} Python files; the rest are skipped"
                    ))
                    return
                yield Path(entry.path)
        todo.extend(reversed(subfolders))


def _realpath(path: Path) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError, RuntimeError):
        return None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _outside(path: Path) -> str:
    target = _realpath(path)
    where = f" ({target})" if target is not None else ""
    return f"is a symlink out of the tree{where}; it is not followed"


def read_source(path: Path, what: str = "a module") -> str | SourceProblem:
    """The text of one regular file of at most MAX_SOURCE_BYTES, decoded as its coding
    cookie says (UTF-8 without one), or why not (`what` names the kind of file)."""
    shown = str(path)
    try:
        raw = read_regular(path, limit=MAX_SOURCE_BYTES, what=what)
    except FileRefused as refused:
        if refused.kind == "too-large" and what == "a module":
            return SourceProblem(shown, f"{refused.reason} ({MAX_SOURCE_ENV}=<MiB> raises it)")
        return SourceProblem(shown, refused.reason)
    try:  # a PEP 263 coding cookie is honoured, as Python honours it (UTF-8 without one)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as err:  # an unknown encoding, or a cookie the BOM contradicts
        if not err.msg.startswith("invalid or missing encoding declaration"):
            return SourceProblem(shown, f"has an unusable coding cookie ({err.msg})")
        encoding = "utf-8"  # no cookie, and not UTF-8: the decoding below says where
    try:
        return raw.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        named = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        return SourceProblem(
            shown, f"is not {named} text (byte 0x{raw[err.start]:02x} at offset {err.start})"
        )
