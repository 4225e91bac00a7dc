"""Reading one untrusted file with bounded work: the primitive under every guarded reader.

Configs (`reading.safe_read`) and source trees (`tree.source.reading`) are read the
same way: opened without blocking (a FIFO without a writer cannot hang the reader),
regular files only, at most `limit` bytes even if the file grows while it is read. Each
caller turns a `FileRefused` into its own error type.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from nemo_rl_workers.reading.recorded_reads import content_digest, note_file

RefusalKind = Literal["missing-file", "not-a-file", "unreadable", "too-large"]


class FileRefused(Exception):
    """Why a file was not read, as a reason phrase that follows the file's name."""

    def __init__(self, reason: str, kind: RefusalKind) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind: RefusalKind = kind


def os_reason(error: OSError) -> str:
    """The operating system's refusal of a path, in words that follow its name."""
    if error.errno == errno.ELOOP:
        return "cannot be read: its path is a symlink loop"
    if error.errno == errno.ENAMETOOLONG:
        return "cannot be read: its name is too long for the file system"
    return f"cannot be read: {error.strerror or error}"


def read_regular(path: Path, *, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`what` names the kind of
    file in the size message: "a config file", "a module"), or FileRefused. Within a
    recording (`recorded_reads`), the read is recorded: the bytes' digest, or the refusal."""
    try:
        raw = _read_regular(path, limit=limit, what=what)
    except FileRefused as refused:
        note_file(path, limit, f"refused:{refused.kind}")
        raise
    note_file(path, limit, lambda: content_digest(raw))
    return raw


def _read_regular(path: Path, *, limit: int, what: str) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError as e:
        raise FileRefused("no such file", "missing-file") from e
    except IsADirectoryError as e:
        raise FileRefused("is not a regular file", "not-a-file") from e
    except OSError as e:
        raise FileRefused(os_reason(e), "unreadable") from e
    except ValueError as e:  # a NUL in the name
        raise FileRefused("cannot be read: a bad file name", "unreadable") from e
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("is not a regular file", "not-a-file")
        if info.st_size > limit:
            raise FileRefused(
                f"is {info.st_size} bytes, over the {limit}-byte limit for {what}", "too-large"
            )
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the file may have grown since fstat
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise FileRefused(os_reason(e), "unreadable") from e
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > limit:
        raise FileRefused(f"is over the {limit}-byte limit for {what}", "too-large")
    return raw
