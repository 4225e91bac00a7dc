"""What a computation read from outside the process: files, the kinds of paths, folder
listings and environment variables, recorded while it ran.

A verdict on one config depends on more than the config: the files of its `defaults:`
chain, the entry script and the suite script that launch it (and whether one exists), the
environment variables the tree's code reads. Those are known only once it ran, so, as
make's and mypy's dependency records do, the readers note each thing they read into the
innermost `recording()` active in this context; a cached verdict keeps the record, and is
used again only where every recorded thing still reads the same (`still_true`).

A reader that remembers an answer within the process (a parse kept by the file's stat)
keeps the record of its first computation beside it and `replay`s it on every hit, so a
hit is recorded as the read it stands for. Nothing is recorded outside a recording.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

# What a path is, as a probe saw it.
FILE, FOLDER, MISSING, OTHER, UNUSABLE = "file", "folder", "missing", "other", "unusable"


@dataclass
class Reads:
    """Everything one computation read (see the module docstring)."""

    files: dict[str, tuple[int, str]] = field(default_factory=dict)  # path: (limit, digest)
    kinds: dict[str, str] = field(default_factory=dict)  # path: what a probe found
    listings: dict[str, str] = field(default_factory=dict)  # folder: digest of its names
    environ: dict[str, str | None] = field(default_factory=dict)  # name: value (None: unset)
    whole_environ: bool = False  # the environment was iterated: every variable counts
    # Variables read through `${oc.env:...}`, whose values the output hides: a kept answer
    # is shown with them hidden too.
    redacted: dict[str, None] = field(default_factory=dict)

    def merge(self, other: Reads) -> None:
        for path, read in other.files.items():
            self.files.setdefault(path, read)
        for path, kind in other.kinds.items():
            self.kinds.setdefault(path, kind)
        for folder, names in other.listings.items():
            self.listings.setdefault(folder, names)
        for name, value in other.environ.items():
            self.environ.setdefault(name, value)
        self.whole_environ = self.whole_environ or other.whole_environ
        self.redacted.update(other.redacted)


_CURRENT: ContextVar[Reads | None] = ContextVar("nemo_rl_workers_reads", default=None)


@contextlib.contextmanager
def recording() -> Generator[Reads]:
    """Record what the body reads; on exit it is part of the enclosing recording too."""
    reads = Reads()
    token = _CURRENT.set(reads)
    try:
        yield reads
    finally:
        _CURRENT.reset(token)
        outer = _CURRENT.get()
        if outer is not None:
            outer.merge(reads)


def replay(reads: Reads) -> None:
    """Record `reads` again, for an answer kept in the process that stands for them."""
    current = _CURRENT.get()
    if current is not None:
        current.merge(reads)


def is_recording() -> bool:
    return _CURRENT.get() is not None


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def note_file(path: Path | str, limit: int, digest: str | Callable[[], str]) -> None:
    """A file read under `limit`: its bytes' digest, or "refused:<kind>" (`file_digest`'s
    answers). `digest` may be a function, called only while recording."""
    current = _CURRENT.get()
    if current is not None:
        current.files.setdefault(os.path.abspath(path),
                                 (limit, digest if isinstance(digest, str) else digest()))


def kind_of(path: Path | str) -> str:
    """What `path` is (following symlinks), recorded: FILE, FOLDER, MISSING, OTHER, or
    UNUSABLE (a name the system refuses, a loop)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        kind = MISSING
    except (OSError, ValueError):
        kind = UNUSABLE
    else:
        kind = (FILE if stat.S_ISREG(info.st_mode)
                else FOLDER if stat.S_ISDIR(info.st_mode) else OTHER)
    current = _CURRENT.get()
    if current is not None:
        current.kinds.setdefault(os.path.abspath(path), kind)
    return kind


def note_listing(folder: Path | str, names: Iterable[str]) -> None:
    """The names a folder held when it was listed."""
    current = _CURRENT.get()
    if current is not None:
        where = os.path.abspath(folder)
        if where not in current.listings:
            current.listings[where] = names_digest(names)


def names_digest(names: Iterable[str]) -> str:
    return content_digest("\0".join(sorted(names)).encode("utf-8", "surrogateescape"))


def listing_digest(folder: str) -> str:
    """What `note_listing` records for `folder` now ("" where it cannot be listed)."""
    try:
        return names_digest(os.listdir(folder))
    except (OSError, ValueError):
        return ""


class _Environ(Mapping[str, str]):
    """`os.environ`, read-only, each name looked up recorded (iteration: every name)."""

    def __getitem__(self, name: str) -> str:
        self._note(name)
        return os.environ[name]

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self._note(name)
        return name in os.environ

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]  # Mapping.get's overloads, one signature here
        self._note(name)
        return os.environ.get(name, default)

    def __iter__(self) -> Iterator[str]:
        self._whole()
        return iter(os.environ)

    def __len__(self) -> int:
        self._whole()
        return len(os.environ)

    @staticmethod
    def _note(name: str) -> None:
        current = _CURRENT.get()
        if current is not None:
            current.environ.setdefault(name, os.environ.get(name))

    @staticmethod
    def _whole() -> None:
        current = _CURRENT.get()
        if current is not None:
            current.whole_environ = True


ENVIRON: Mapping[str, str] = _Environ()


class Exported(Mapping[str, str]):
    """The process's environment (`ENVIRON`, its reads recorded) with what a launch
    exports over it: a variable the launch sets is never read from the process."""

    def __init__(self, exported: Mapping[str, str]) -> None:
        self.exported = dict(exported)

    def __getitem__(self, name: str) -> str:
        if name in self.exported:
            return self.exported[name]
        return ENVIRON[name]

    def __contains__(self, name: object) -> bool:
        return name in self.exported or name in ENVIRON

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(ENVIRON), **dict.fromkeys(self.exported)})

    def __len__(self) -> int:
        return len(set(ENVIRON) | set(self.exported))


def environ() -> Mapping[str, str]:
    """The process's environment as the tool's readers see it: every read recorded."""
    return ENVIRON


def note_environ_read(name: str) -> None:
    """A variable something outside the tool reads (OmegaConf's `oc.env`), recorded."""
    _Environ._note(name)


def note_redacted(name: str) -> None:
    """A variable whose value the output hides, recorded."""
    current = _CURRENT.get()
    if current is not None:
        current.redacted[name] = None


def note_whole_environ() -> None:
    """Something read variables it did not name (an interpolated name)."""
    _Environ._whole()


def still_true(reads: Reads, file_digest: Callable[[str, int], str]) -> bool:
    """Whether everything `reads` recorded reads the same now (`file_digest(path, limit)`:
    the digest a read of the file would record)."""
    if reads.whole_environ:
        return False
    if any(os.environ.get(name) != value for name, value in reads.environ.items()):
        return False
    if any(_kind_now(path) != kind for path, kind in reads.kinds.items()):
        return False
    if any(listing_digest(folder) != names for folder, names in reads.listings.items()):
        return False
    return all(file_digest(path, limit) == digest
               for path, (limit, digest) in reads.files.items())


def _kind_now(path: str) -> str:
    token = _CURRENT.set(None)
    try:
        return kind_of(path)
    finally:
        _CURRENT.reset(token)
