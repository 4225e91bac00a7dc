"""The one file digest, and the index that keeps digests of unchanged files.

`file_digest` is sha256 of a file's bytes read through the guarded reader, or the reason
it refuses the file: a file the reader would not read is never hashed (a FIFO is not
waited on, a sparse 30 GB file is not read), and its refusal is an input all the same.

Hashing some 430 files on every run is most of what a cached run spends before it can load
a tree's model, so, as git's index and mypy's cache do, a file's digest is kept beside its
stat (device, inode, size, mtime, ctime) in the store (`DigestIndex`, one entry per folder)
and reused while that stat is unchanged. Any write or `chmod` moves a file's ctime, which
no user can set back; a digest is kept only for a file whose ctime was `RACY_NS` older than
the moment it was hashed (git's "racily clean" rule), so a write within one timestamp tick
of the hashing cannot hide. A digest is the same with or without the index; a damaged
index costs time only.

`program_digest` is this program's own code and interpreter: an input of every answer
that is not derived from another keyed one.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular
from nemo_rl_workers.reading.recorded_reads import note_file

RACY_NS = 2_000_000_000
Stamp = tuple[int, int, int, int, int, str]  # device, inode, size, mtime, ctime; the digest
FileDigests = tuple[tuple[str, str], ...]  # (file, its digest), in the order given


def file_digest(path: Path, limit: int) -> str:
    """sha256 of the file's bytes (at most `limit` of them) through the guarded reader, or
    "refused:<kind>" (see the module docstring)."""
    try:
        return hashlib.sha256(read_regular(path, limit=limit, what="a file")).hexdigest()
    except FileRefused as refused:
        return f"refused:{refused.kind}"


@dataclass(frozen=True)
class IndexInputs:
    folder: str


@dataclass(frozen=True)
class KeptDigests:
    files: Mapping[str, Stamp]


INDEX = Computation("digest-index", IndexInputs, KeptDigests)


@dataclass
class DigestIndex:
    """Digests of the files under one folder by their stat, as one entry of the store."""

    store: Store | None
    folder: str
    kept: dict[str, Stamp] = field(default_factory=dict)
    changed: bool = False
    seen: set[str] = field(default_factory=set)  # the files asked about since loaded

    @classmethod
    def of(cls, store: Store | None, folder: Path) -> DigestIndex:
        found = store.get(INDEX, IndexInputs(str(folder))).payload if store else None
        return cls(store, str(folder), dict(found.files) if found is not None else {})

    def digest(self, path: Path, limit: int) -> str:
        """What `file_digest` answers for `path`, from the index where its stat is the one
        kept; recorded as a read of the file (`recorded_reads`) either way."""
        answer = self._digest(path, limit)
        note_file(path, limit, answer)
        return answer

    def _digest(self, path: Path, limit: int) -> str:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return file_digest(path, limit)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return file_digest(path, limit)  # refused, never read: nothing to save
        self.seen.add(str(path))
        now = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        kept = self.kept.get(str(path))
        if kept is not None and kept[:5] == now:
            return kept[5]
        hashed_at = time.time_ns()
        answer = file_digest(path, limit)
        if not answer.startswith("refused:") and info.st_ctime_ns < hashed_at - RACY_NS:
            self.kept[str(path)] = (*now, answer)
            self.changed = True
        elif kept is not None:
            del self.kept[str(path)]
            self.changed = True
        return answer

    def save(self) -> None:
        """Store the digests of the files asked about (a file gone from the folder leaves
        the index with it)."""
        gone = set(self.kept) - self.seen
        if self.store is not None and (self.changed or gone):
            self.store.put(INDEX, IndexInputs(self.folder), KeptDigests(
                {k: v for k, v in self.kept.items() if k not in gone}))
            self.changed = False


def digests(files: Iterable[Path], limit: int, index: DigestIndex | None = None) -> FileDigests:
    """Each file with its digest (from `index` where its stat is unchanged)."""
    digest = index.digest if index is not None else file_digest
    return tuple((str(file), digest(file, limit)) for file in files)


def own_files() -> list[Path]:
    """The code every cached answer depends on, beside its inputs: every module of this
    package (the layers move; a list of folders would fall behind and keep stale answers)."""
    package = Path(__file__).resolve().parents[1]  # nemo_rl_workers/
    return sorted(package.rglob("*.py"))


def program_digest(limit: int, index: DigestIndex | None = None) -> str:
    """This program's code (every module, each read under `limit`, the module size cap)
    and the interpreter, as one digest."""
    whole = hashlib.sha256(repr((sys.version, limit)).encode())
    for file, digest in digests(own_files(), limit, index):
        whole.update(f"{file}\0{digest}\n".encode("utf-8", "surrogateescape"))
    return whole.hexdigest()
