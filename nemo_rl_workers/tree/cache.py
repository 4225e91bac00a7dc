"""Entries on disk, keyed by the content of everything an answer was made from.

One scheme for every cache of the tool: the tree model (`revision_cache`), `audit`'s
answers and the static verdicts (`checks.static_cache`) are entries here. An entry is
found by a key its user computes over everything the answer depends on (the bytes of
every file read, this program's own code, the question); it holds a JSON payload with a
checksum over it, written through the one atomic writer (`reading.atomic_write`: a
temporary file renamed into place), so a reader sees a whole entry or none.

An entry that is not a regular file (a FIFO is never waited on), too large, truncated, not
JSON, of another format, under another key or failing its checksum is ignored: `load`
says why in one phrase (`Loaded.ignored`), its caller prints one line, and the answer is
made afresh and stored over it. The cache can make a run faster, never change its answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

DEFAULT_CACHE_DIR = ".nemo-rl-workers-cache"
FORMAT = 1
MAX_ENTRY_BYTES = 8 * 1024 * 1024


class CacheDirError(ValueError):
    """A cache folder that cannot be used: one line naming it and why."""


def checksum(payload: object) -> str:
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, ensure_ascii=True).encode()
    ).hexdigest()


@dataclass(frozen=True)
class Loaded:
    """What `load` found: the payload, or None with why an existing entry was ignored
    (None too when there was no entry: a plain miss says nothing)."""

    payload: dict[str, Any] | None
    ignored: str | None = None


@dataclass(frozen=True)
class ContentCache:
    """Entries under `folder/v<FORMAT>/`; see the module's docstring."""

    folder: Path

    @classmethod
    def open(cls, folder: str | os.PathLike[str], *, create: bool = True) -> Self:
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
            if not marker.exists():
                write_atomic(marker, text.encode("utf-8"), links="replace", within=self.folder)

    def _entry(self, key: str) -> Path:
        return self._entries() / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The payload stored under `key`, or None for a missing or untrustworthy entry."""
        return self.load_entry(key).payload

    def load_entry(self, key: str) -> Loaded:
        """The payload under `key`, or why an entry there is not trusted."""
        path = self._entry(key)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            return Loaded(None)
        except OSError as err:
            return Loaded(None, f"cannot be read ({err.strerror or type(err).__name__})")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return Loaded(None, "is not a regular file")
            if info.st_size > MAX_ENTRY_BYTES:
                return Loaded(None, f"is over the {MAX_ENTRY_BYTES}-byte limit for an entry")
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_ENTRY_BYTES + 1)
        except OSError as err:
            return Loaded(None, f"cannot be read ({err.strerror or type(err).__name__})")
        finally:
            os.close(fd)
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return Loaded(None, "is not whole JSON (truncated or damaged)")
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return Loaded(None, "is of another format (another version of the tool)")
        payload = entry.get("payload")
        if entry.get("key") != key or not isinstance(payload, dict):
            return Loaded(None, "is not the entry of its key")
        if entry.get("sha256") != checksum(payload):
            return Loaded(None, "fails its checksum")
        return Loaded(payload)

    def describe(self, key: str) -> str:
        """How a line names the entry of `key`."""
        return one_line(str(self._entry(key)))

    def store(self, key: str, payload: dict[str, Any]) -> None:
        """Write the entry whole or not at all, through the one atomic writer (a symlink
        in its place is replaced, never written through); a full disk only costs the next
        run time."""
        entry = {"format": FORMAT, "key": key, "payload": payload, "sha256": checksum(payload)}
        try:
            self._prepare()  # the default folder is made on the first entry stored
            write_atomic(self._entry(key), json.dumps(entry, ensure_ascii=True).encode(),
                         links="replace", within=self.folder)
        except OSError:
            pass


def guarded_digest(path: Path, limit: int) -> str:
    """sha256 of a file's bytes through the guarded reader, or the reason it refuses the
    file: a file the reader would not read is never hashed (a FIFO is not waited on, a
    sparse 30 GB file is not read), and its refusal is part of the key all the same."""
    try:
        return hashlib.sha256(read_regular(path, limit=limit, what="a file")).hexdigest()
    except FileRefused as refused:
        return f"refused:{refused.kind}"


def digest_files(digest: Any, files: Iterable[Path], limit: int,
                 digest_of: Callable[[Path, int], str] = guarded_digest) -> None:
    """Add each file's name and guarded digest to `digest` (a hashlib object); `digest_of`
    answers as `guarded_digest` does (`content_key.DigestIndex.digest` from its index)."""
    for file in files:
        digest.update(f"{file}\0{digest_of(file, limit)}\n".encode("utf-8",
                                                                    "surrogateescape"))


def own_files() -> list[Path]:
    """The code every cached answer depends on, beside its inputs: every module of this
    package (the layers move; a list of folders would fall behind and keep stale answers)."""
    package = Path(__file__).resolve().parents[1]  # nemo_rl_workers/
    return sorted(package.rglob("*.py"))
