"""The commit a folder's git checkout is at, read from the repository's files.

No `git` is run (it may not be installed where the tool runs, and a repository's config can
name programs to run); HEAD, the ref it names and `packed-refs` are read as untrusted
files, each bounded. A linked worktree (`.git` is a file naming its git directory) and a
shared `commondir` are followed. Anything else (no repository, an unborn branch, a ref
format this reader does not know) is None, never an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

# HEAD, a ref file and a `.git` file are a line; packed-refs lists every ref.
_SMALL = 4096
_PACKED = 8 * 1024 * 1024
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories
_REF = re.compile(r"refs/[A-Za-z0-9._/-]+")


def _read(path: Path, limit: int = _SMALL) -> str | None:
    try:
        return read_regular(path, limit=limit, what="a git file").decode("utf-8", "replace")
    except (FileRefused, OSError, ValueError):
        return None


def _git_dir(folder: Path) -> Path | None:
    """The git directory of a checkout whose top is `folder`, or None."""
    dot = folder / ".git"
    try:
        if dot.is_dir():
            return dot
        if not dot.is_file():
            return None
    except OSError:
        return None
    text = _read(dot)
    if text is None or not text.startswith("gitdir:"):
        return None
    return folder / text.removeprefix("gitdir:").strip()


def _ref_commit(git_dir: Path, ref: str) -> str | None:
    common = git_dir
    shared = _read(git_dir / "commondir")
    if shared is not None and shared.strip():
        common = git_dir / shared.strip()
    for where in dict.fromkeys((git_dir, common)):
        text = _read(where / ref)
        if text is not None and _SHA.fullmatch(text.strip()):
            return text.strip()
    packed = _read(common / "packed-refs", _PACKED)
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.fullmatch(sha):
            return sha
    return None


def head_commit(folder: Path) -> str | None:
    """The commit the git checkout holding `folder` has checked out, or None."""
    try:
        start = folder.resolve()
    except (OSError, RuntimeError):
        return None
    for place in (start, *start.parents):
        git_dir = _git_dir(place)
        if git_dir is None:
            continue
        head = (_read(git_dir / "HEAD") or "").strip()
        if _SHA.fullmatch(head):
            return head
        ref = head.removeprefix("ref:").strip()
        if head.startswith("ref:") and _REF.fullmatch(ref) and ".." not in ref:
            return _ref_commit(git_dir, ref)
        return None
    return None
