"""`audit` answered from the cache when nothing it reads has changed.

An audit reads every `.py`/`.pyi` file of the checkout's `nemo_rl` package, of its entry
scripts (`examples/`) and of the installed stub folders (`audit.run.audit_inputs` lists
them, as `read_tree` reads them), the baseline when one is given, and this program's own
code. The entry's key is the sha256 of all of those files' bytes, with the command's
arguments, the working folder (paths are shown from it) and whether the output is
coloured; the entry holds what the audit wrote (stdout, stderr) and its exit code. An
audit that found the tree unusable (exit 2) or wrote a baseline is not stored. Entries are
`static_cache`'s: checksummed, written whole, never trusted when damaged.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from nemo_rl_workers.checks.static_cache import FORMAT, StaticCache
from nemo_rl_workers.checks.static_inputs import file_digest, installed_fingerprint
from nemo_rl_workers.commands.cache import open_cache
from nemo_rl_workers.findings.report import use_color
from nemo_rl_workers.tree.cache import own_files

EXIT_UNUSABLE = 2
__all__ = ["audit_key", "own_files", "run_audit_cached"]


class _Captured(io.StringIO):
    """Captures what the audit writes, answering `isatty` as the real stream would (the
    audit colours its text on a terminal)."""

    def __init__(self, real: TextIO) -> None:
        super().__init__()
        self._real = real

    def isatty(self) -> bool:
        isatty = getattr(self._real, "isatty", None)
        return bool(isatty and isatty())


def _files_digest(digest: Any, files: list[Path]) -> None:
    for file in files:
        digest.update(f"{file}\0{file_digest(file)}\n".encode("utf-8", "surrogateescape"))


def _inputs_digest(digest: Any, files: list[Path]) -> bool:
    """Hash the tree's files and the baseline as the audit reads them: through the guarded
    reader, so a FIFO, a device or a 30 GB file is refused by its size before a byte of it
    is read. False when one is refused: the audit then runs (and says why) uncached."""
    from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular
    from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES

    for file in files:
        try:
            raw = read_regular(file, limit=MAX_SOURCE_BYTES, what="a module")
        except FileRefused:
            return False
        digest.update(f"{file}\0{hashlib.sha256(raw).hexdigest()}\n".encode(
            "utf-8", "surrogateescape"))
    return True


def _tree_files(checkout: Path) -> list[Path]:
    """What the audit reads: the package, the entry scripts beside it (actors they start
    and call), the installed stubs."""
    from nemo_rl_workers.checks.audit.run import audit_inputs

    return audit_inputs(checkout)


def audit_key(args: argparse.Namespace, out: TextIO) -> str | None:
    """The entry's key, or None when the tree or the baseline cannot be read (the audit
    reports why)."""
    from nemo_rl_workers.checks.audit.run import UnusableTree, checkout_root
    from nemo_rl_workers.checks.static_check import ImportRoots

    try:
        checkout = checkout_root(Path(args.nemo_rl))
    except UnusableTree:
        return None
    digest = hashlib.sha256()
    given = {k: v for k, v in sorted(vars(args).items()) if k not in ("cache_dir", "no_cache")}
    digest.update(repr((FORMAT, "audit", given, os.getcwd(), use_color(out),
                        sys.version, sys.executable)).encode("utf-8", "surrogateescape"))
    digest.update(installed_fingerprint(ImportRoots.of_this_interpreter()).encode())
    inputs = _tree_files(checkout) + ([Path(args.baseline)] if args.baseline else [])
    if not _inputs_digest(digest, inputs):
        return None
    _files_digest(digest, own_files())
    return digest.hexdigest()


def run_audit_cached(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers audit ...`, from the cache when it validly holds the answer."""
    from nemo_rl_workers.commands.audit import run_audit

    if getattr(args, "no_cache", False) or args.write_baseline or getattr(
            args, "prune_baseline", False):  # what writes a file runs every time
        return run_audit(args, out, err)
    key = audit_key(args, out)
    if key is None:  # the tree cannot be read: the audit says why, nothing is stored
        return run_audit(args, out, err)
    usable, cache = open_cache(args, err)
    if not usable:
        return EXIT_UNUSABLE
    if cache is not None:
        hit = _load(cache, key, err)
        if hit is not None:
            code, stdout, stderr = hit
            out.write(stdout)
            err.write(stderr)
            return code
    captured_out, captured_err = _Captured(out), _Captured(err)
    code = run_audit(args, captured_out, captured_err)
    out.write(captured_out.getvalue())
    err.write(captured_err.getvalue())
    if cache is not None and code != EXIT_UNUSABLE:
        cache.store(key, {"exit": code, "stdout": captured_out.getvalue(),
                          "stderr": captured_err.getvalue()})
    return code


def _load(cache: StaticCache, key: str, err: TextIO) -> tuple[int, str, str] | None:
    """The stored answer, or None; an entry that is there but not trusted is one line."""
    loaded = cache.load_entry(key)
    why = loaded.ignored
    if loaded.payload is not None:
        payload = loaded.payload
        code, stdout, stderr = payload.get("exit"), payload.get("stdout"), payload.get("stderr")
        if isinstance(code, int) and isinstance(stdout, str) and isinstance(stderr, str):
            return code, stdout, stderr
        why = "holds a damaged answer"
    if why is not None:
        print(f"nemo-rl-workers: warning: cache entry {cache.describe(key)} {why}; ignored, "
              "the audit runs again", file=err)
    return None
