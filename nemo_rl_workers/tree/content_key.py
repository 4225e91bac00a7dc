"""The key of a cached answer: the bytes of every file it is made from, and the question.

`content_key` is the one digest every cache of the tool keys its entries by: what the
answer is (`kind`), what it was asked with (arguments, values read afresh), this
program's own code, the interpreter, the module size cap (what the reader refuses), and
every file read (through the guarded reader: a file it would refuse is keyed by its
refusal, never read or hashed). A tree's model (`tree_content_key`) is made from every
module of the tree's `nemo_rl` and the folder. Hashing some 430 files on every run is
most of what a cached run spends before it can load its model (the guard pays it on a
program's first worker group), so, as git's index and mypy's cache do, a file's digest
is kept beside its stat (device, inode, size, mtime, ctime) in the content cache and
reused while that stat is unchanged.
Any write or `chmod` moves a file's ctime, which no user can set back; a digest is kept
only for a file whose ctime was `RACY_NS` older than the moment it was hashed (git's
"racily clean" rule), so a write within one timestamp tick of the hashing cannot hide.
The key is the same with or without the kept digests; a damaged index costs time only.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.tree.cache import (
    FORMAT,
    ContentCache,
    digest_files,
    guarded_digest,
    own_files,
)
from nemo_rl_workers.tree.checkout import PACKAGE
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, SourceProblem, discover

RACY_NS = 2_000_000_000
_STAMP = 5  # device, inode, size, mtime, ctime; then the digest


@dataclass
class DigestIndex:
    """Digests of files by their stat, as one entry of the content cache (`name`)."""

    cache: ContentCache | None
    name: str
    kept: dict[str, list[object]] = field(default_factory=dict)
    changed: bool = False
    seen: set[str] = field(default_factory=set)  # the files this key covers

    @classmethod
    def of(cls, cache: ContentCache | None, root: Path) -> DigestIndex:
        name = "index-" + hashlib.sha256(
            repr((FORMAT, str(root))).encode("utf-8", "surrogateescape")).hexdigest()
        found = cache.load(name) if cache is not None else None
        files = found.get("files") if found is not None else None
        kept = {k: v for k, v in files.items() if _well_formed(v)} if isinstance(
            files, dict) else {}
        return cls(cache, name, kept)

    def digest(self, path: Path, limit: int) -> str:
        """What `guarded_digest` answers for `path`, from the index where its stat is the
        one kept."""
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return guarded_digest(path, limit)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return guarded_digest(path, limit)  # refused, never read: nothing to save
        self.seen.add(str(path))
        stamp: list[object] = [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                               info.st_ctime_ns]
        kept = self.kept.get(str(path))
        if kept is not None and kept[:_STAMP] == stamp:
            return str(kept[_STAMP])
        hashed_at = time.time_ns()
        answer = guarded_digest(path, limit)
        if not answer.startswith("refused:") and info.st_ctime_ns < hashed_at - RACY_NS:
            self.kept[str(path)] = [*stamp, answer]
            self.changed = True
        elif kept is not None:
            del self.kept[str(path)]
            self.changed = True
        return answer

    def save(self) -> None:
        """Store the digests of the files this key covered (a file gone from the tree
        leaves the index with it)."""
        gone = set(self.kept) - self.seen
        if self.cache is not None and (self.changed or gone):
            self.cache.store(self.name, {"files": {
                k: v for k, v in self.kept.items() if k not in gone}})
            self.changed = False


def _well_formed(value: object) -> bool:
    return (isinstance(value, list) and len(value) == _STAMP + 1
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value[:_STAMP])
            and isinstance(value[_STAMP], str))


def content_key(kind: str, question: object, files: Iterable[Path],
                index: DigestIndex | None = None) -> str:
    """The key of an answer of `kind` made from `files` and asked with `question` (a value
    whose `repr` is stable: arguments, what is read afresh), with this program's code, the
    interpreter and the module size cap; `index` gives the digests of unchanged files and
    is saved with those this key covered."""
    digest_of = index.digest if index is not None else guarded_digest
    digest = hashlib.sha256()
    digest.update(repr((FORMAT, kind, sys.version, MAX_SOURCE_BYTES, question)).encode(
        "utf-8", "surrogateescape"))
    digest_files(digest, own_files(), MAX_SOURCE_BYTES, digest_of)
    digest_files(digest, files, MAX_SOURCE_BYTES, digest_of)
    if index is not None:
        index.save()
    return digest.hexdigest()


def tree_content_key(root: Path, kind: str, cache: ContentCache | None = None) -> str:
    """The key over what a model of the tree at `root` is made from (the module's
    docstring); `kind` tells models of one tree apart (the revision, the guard's); with
    `cache`, the digests of files whose stat is unchanged are taken from its index."""
    problems: list[SourceProblem] = []
    files = list(discover(root / PACKAGE, problems, boundary=root))
    return content_key(kind, (str(root), [str(p) for p in problems]), files,
                       DigestIndex.of(cache, root))


__all__ = ["RACY_NS", "DigestIndex", "content_key", "tree_content_key"]
