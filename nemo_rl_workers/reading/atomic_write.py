"""The one way the tool replaces a file: emitted Protocols, baselines, migrated configs and
cache entries all go through `write_atomic`.

The new bytes go to a temporary file created with `O_CREAT | O_EXCL | O_NOFOLLOW` in the
target's own folder under a name no one can guess (a random token), so a file or symlink
planted there beforehand is never written through; it is fsynced and renamed over the
target (`os.replace`), so a reader sees the old file or the new one, never a mix. The
target's permission bits are kept (a new file gets what the umask allows, as any new file).
A symlinked target is written through to the file it names and the link stays
(`links="follow"`); or, for cache entries, which nobody links or edits, whatever is there
(a symlink, a FIFO) is replaced by the new file and never written through
(`links="replace"`).
On every failure (a full disk, an interrupted write, a refused rename) the temporary file
is removed and the target is left as it was.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Literal

Links = Literal["follow", "replace"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0)
_NAME_CHARS = 40  # of the target's name in the temporary one: the whole stays under NAME_MAX


class TargetRefused(OSError):
    """The target is not something a file can replace (a folder, a device, a dangling
    symlink); `strerror` says which, in a few words."""


def _target(path: Path, links: Links) -> Path:
    """The path the new file is renamed to: `path`, or the file a symlinked `path` names."""
    if links == "replace" or not os.path.islink(path):
        return path
    real = Path(os.path.realpath(path))
    if not os.path.lexists(real) or os.path.islink(real):
        raise TargetRefused(errno.ENOENT, "is a symlink to a missing file; not written",
                            str(path))
    return real


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


def write_atomic(path: Path, data: bytes, *, links: Links = "follow") -> None:
    """Replace `path` by `data` atomically; see the module's docstring. Raises OSError
    (`TargetRefused` for a target that is not a file) with the target left unchanged and
    no temporary file left behind."""
    target = _target(Path(path), links)
    mode = _mode(target, links)
    folder = target.parent if str(target.parent) else Path(".")
    fd, temp = _create_temporary(folder, target.name)
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
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
