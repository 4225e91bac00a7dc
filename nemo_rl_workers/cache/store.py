"""The content-keyed store: one entry per key, checksummed JSON, written whole.

An entry is found by its computation's key (`key.Computation.key`); it holds the payload
`codec.encode` wrote, the computation's name and the codec's version, with a checksum over
the payload. It is written through one function (`_write`: the one atomic writer, a
temporary file renamed into place; a symlink or FIFO in its place is replaced, never
written through), so a reader sees a whole entry or none.

An entry that is not a regular file (a FIFO is never waited on), too large, truncated, not
JSON, of another format or computation, under another key, failing its checksum or
holding a payload not of its type is ignored: `get` says why in one phrase (`Got.ignored`),
its caller prints one line, and the answer is made afresh and stored over it. The cache
can make a run faster, never change its answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Self

from nemo_rl_workers.cache import codec
from nemo_rl_workers.cache.key import Computation, In, Out
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.atomic_write import write_atomic

FORMAT = 3  # 3: the checksum reads the payload's keys in their order
MAX_ENTRY_BYTES = 8 * 1024 * 1024


class CacheDirError(ValueError):
    """A cache folder that cannot be used: one line naming it and why."""


@dataclass(frozen=True)
class Got(Generic[Out]):
    """What `get` found: the payload, or None with why an existing entry was ignored
    (None too when there was no entry: a plain miss says nothing)."""

    payload: Out | None
    ignored: str | None = None


@dataclass(frozen=True)
class Store:
    """Entries under `folder/v<FORMAT>/`; see the module's docstring."""

    folder: Path

    @classmethod
    def open(cls, folder: str | os.PathLike[str], *, create: bool = True) -> Self:
        """The store in `folder`, created now if missing (`create`), else when the first
        entry is stored; `CacheDirError` if it exists and cannot be used, or cannot be
        created."""
        shown = one_line(os.fspath(folder))  # a name may hold a newline
        if not shown:
            raise CacheDirError("the cache folder's name is empty")
        path = Path(folder)
        if path.exists() and not path.is_dir():
            raise CacheDirError(f"cache folder {shown} exists and is not a directory")
        store = cls(path)
        if create or path.exists():
            try:
                store._prepare()
                probe_fd, probe = tempfile.mkstemp(dir=store._entries(), prefix=".write-test-")
                os.close(probe_fd)
                os.unlink(probe)
            except OSError as err:
                reason = err.strerror or type(err).__name__
                raise CacheDirError(f"cache folder {shown} cannot be used: {reason}") from err
        return store

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

    def entry_path(self, key: str) -> Path:
        return self._entries() / f"{key}.json"

    def describe(self, key: str) -> str:
        """How a line names the entry of `key`."""
        return one_line(str(self.entry_path(key)))

    def get(self, computation: Computation[In, Out], inputs: In) -> Got[Out]:
        """The payload `computation` stored for `inputs`, or why an entry is not trusted."""
        return self.get_at(computation, computation.key(inputs))

    def get_at(self, computation: Computation[In, Out], key: str) -> Got[Out]:
        """`get`, by a key already made (one a pointer entry names)."""
        found, why = self._read(key)
        if found is None:
            return Got(None, why)
        if found.get("computation") != computation.name:
            return Got(None, "is not the entry of its key")
        try:
            return Got(codec.decode(computation.payload, found["payload"]))
        except codec.CodecError as bad:
            return Got(None, f"holds a damaged {computation.what} ({bad})")

    def put(self, computation: Computation[In, Out], inputs: In, payload: Out) -> str:
        """Store `payload` as the answer to `inputs`; its key."""
        key = computation.key(inputs)
        self.put_at(computation, key, payload)
        return key

    def put_at(self, computation: Computation[In, Out], key: str, payload: Out) -> None:
        if not isinstance(payload, computation.payload):
            raise TypeError(f"{computation.name} holds {computation.payload.__name__}, "
                            f"not {type(payload).__name__}")
        text = _payload_text(codec.encode(payload))
        head = json.dumps({"format": FORMAT, "codec": codec.VERSION,
                           "computation": computation.name, "key": key}, ensure_ascii=True)
        # The payload is written once, as its checksum reads it.
        entry = f'{head[:-1]}, "payload": {text}, "sha256": "{_digest(text)}"}}'
        self._write(self.entry_path(key), entry.encode("ascii"))

    def _write(self, path: Path, data: bytes) -> None:
        """The one place an entry is written: whole or not at all, through the one atomic
        writer; a full disk only costs the next run time."""
        try:
            self._prepare()  # the default folder is made on the first entry stored
            # Not synced: a torn entry fails its checksum and is computed again, while a
            # cold `check` of a repository writes a thousand entries.
            write_atomic(path, data, links="replace", within=self.folder, durable=False)
        except OSError:
            pass

    def _read(self, key: str) -> tuple[dict[str, Any] | None, str | None]:
        """The whole entry under `key` whose checksum holds, or why it is not trusted."""
        path = self.entry_path(key)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            return None, None
        except OSError as err:
            return None, f"cannot be read ({err.strerror or type(err).__name__})"
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, "is not a regular file"
            if info.st_size > MAX_ENTRY_BYTES:
                return None, f"is over the {MAX_ENTRY_BYTES}-byte limit for an entry"
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_ENTRY_BYTES + 1)
        except OSError as err:
            return None, f"cannot be read ({err.strerror or type(err).__name__})"
        finally:
            os.close(fd)
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None, "is not whole JSON (truncated or damaged)"
        if not isinstance(entry, dict) or entry.get("format") != FORMAT \
                or entry.get("codec") != codec.VERSION:
            return None, "is of another format (another version of the tool)"
        if entry.get("key") != key or "payload" not in entry:
            return None, "is not the entry of its key"
        try:
            if entry.get("sha256") != checksum(entry["payload"]):
                return None, "fails its checksum"
        except (TypeError, ValueError, RecursionError):
            return None, "fails its checksum"
        return entry, None


def checksum(payload: object) -> str:
    """An entry's checksum of its payload (JSON as `codec.encode` writes it): sha256 of
    its text, keys in their order (JSON gives the same text back for what it read)."""
    return _digest(_payload_text(payload))


def _payload_text(payload: object) -> str:
    return json.dumps(payload, ensure_ascii=True, allow_nan=True)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()
