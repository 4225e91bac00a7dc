"""The one way the tool replaces a file: emitted Protocols, baselines, migrated configs,
cache entries and the static checker's probe all go through `write_atomic`.

The new bytes go to a temporary file created with `O_CREAT | O_EXCL | O_NOFOLLOW` in the
target's own folder under a name no one can guess (a random token), so a file or symlink
planted there beforehand is never written through; it is fsynced and renamed over the
target (`os.replace`), so a reader sees the old file or the new one, never a mix. The
target's permission bits are kept (a new file gets what the umask allows, as any new file).
On every failure (a full disk, an interrupted write, a refused rename) the temporary file
is removed and the target is left as it was.

A write never follows a symlink out of the folder it writes in. That folder is the one
the caller names (`within`: a cache's folder, migrate's output folder or the folder a
config was found in), else, for each symlink on the way, the folder that holds the link.
Every symlink on the path below it (a folder on the way or the target itself) must
resolve inside it; otherwise `TargetRefused` says which link points where, and nothing is
written (a baseline committed as a link to `~/.bashrc`, an output folder linked to
`/etc`). A relative path starts at the working folder, whose own path is not judged (it is
where the user chose to work); an absolute one is judged from `/`, and `within`'s own path
is the caller's choice, also not judged. Within that rule, a symlinked target is written
through to the file it names and the link stays (`links="follow"`); or, for cache
entries, which nobody links or edits, whatever is there (a symlink, a FIFO) is replaced by
the new file and never written through (`links="replace"`). A dangling link, a link loop,
a folder, a FIFO or a device as the target is refused. The check and the write are not
one system call: a link swapped in between by a process racing the tool is not caught
(the danger met in CI is a link committed to the repository, there before the tool runs).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Literal

from nemo_rl_workers.errors import one_line

Links = Literal["follow", "replace"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0)
_NAME_CHARS = 40  # of the target's name in the temporary one: the whole stays under NAME_MAX


class TargetRefused(OSError):
    """The target is not something a file can replace (a folder, a device, a dangling
    symlink) or lies through a symlink out of the folder written in; `strerror` says
    which, in words that follow the target's name."""


def _resolved(link: Path, last: bool) -> Path:
    """Where the symlink `link` leads, or TargetRefused for a loop or a missing end."""
    try:
        return Path(os.path.realpath(link, strict=True))
    except OSError as err:
        if err.errno == errno.ELOOP:
            what = "is a symlink loop" if last else f"its folder {one_line(str(link))} is a " \
                                                     "symlink loop"
            raise TargetRefused(errno.ELOOP, f"{what}; not written", str(link)) from err
        what = "is a symlink to a missing file" if last else (
            f"its folder {one_line(str(link))} is a symlink to a missing folder")
        raise TargetRefused(errno.ENOENT, f"{what}; not written", str(link)) from err


def _walk(path: Path, within: Path | None) -> tuple[Path, list[str]]:
    """The folder the walk starts in and the names below it, as given: `within` and the
    rest of `path` when `path` lies (as spelled) under it; else the working folder or `/`."""
    if within is not None:
        try:
            return within, list(path.relative_to(within).parts)
        except ValueError:
            pass
    if path.is_absolute():
        return Path(path.anchor), list(path.parts[1:])
    return Path(), list(path.parts)


def _escape(path: Path, within: Path | None, links: Links) -> Path:
    """The path to rename the new file to (a symlinked target's end, with
    `links="follow"`), or TargetRefused when a symlink on the way leads out of the folder
    written in (see the module's docstring)."""
    current, names = _walk(path, within)
    anchored = within is not None and current == within
    for index, name in enumerate(names):
        last = index == len(names) - 1
        current = current / name
        if last and links == "replace":
            break  # replaced, never followed
        if not os.path.islink(current):
            continue
        real = _resolved(current, last)
        folder = within if anchored and within is not None else current.parent
        home = Path(os.path.realpath(folder))
        if not real.is_relative_to(home):
            shown = one_line(str(folder)) or "."
            what = "is a symlink" if last else f"its folder {one_line(str(current))} is a " \
                                               "symlink"
            raise TargetRefused(errno.EXDEV, f"{what} to {one_line(str(real))}, outside "
                                             f"{shown}, the folder it is written in; "
                                             "not written", str(path))
        if last:
            return real
    return path


def _mode(target: Path, links: Links) -> int | None:
    """The permission bits to keep, or None for a new file; refuses what is not a file."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    if links == "replace" and not stat.S_ISDIR(info.st_mode):
        return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    if not stat.S_ISREG(info.st_mode):
        raise TargetRefused(errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL,
                            "is not a regular file", str(target))
    return stat.S_IMODE(info.st_mode)


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    while True:
        temp = folder / f".{name[:_NAME_CHARS]}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(temp, _FLAGS, 0o666), temp  # the umask applies, as to any new file
        except FileExistsError:  # vanishingly rare with 64 random bits: draw again
            continue


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to `fd` (a short write is continued, ENOSPC raises)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_atomic(path: Path, data: bytes, *, links: Links = "follow",
                 within: Path | None = None, durable: bool = True) -> None:
    """Replace `path` by `data` atomically, never through a symlink out of the folder it
    writes in (`within`, else each link's own folder); see the module's docstring. Raises
    OSError (`TargetRefused` for a target that is not a file or lies out of that folder)
    with the target left unchanged and no temporary file left behind. `durable`: the bytes
    reach the disk before the file is replaced (False for what a checksum guards, a cache
    entry: a crash then costs time, not a wrong answer)."""
    target = _escape(Path(path), None if within is None else Path(within), links)
    mode = _mode(target, links)
    folder = target.parent if str(target.parent) else Path(".")
    fd, temp = _create_temporary(folder, target.name)
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
