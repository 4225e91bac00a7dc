"""`audit` answered from the cache when nothing it reads has changed.

An audit reads every `.py`/`.pyi` file of the checkout's `nemo_rl` package, of its entry
scripts (`examples/`), of each `--path` root and of the installed stub folders
(`audit.run.audit_inputs` lists them, as the audit's `read_tree` reads them), the
baseline when one is given, the installed vllm-stubs' manifests (vLLM's extension rule),
the checkout's `pyproject.toml` (its vLLM pin) and each config given as an EXTENSION
(with its `defaults:` chain and the environment variables it interpolates). The entry's
key (`tree.content_key.content_key`, the one digest every cache keys by) covers the bytes
of those files, this program's own code and the interpreter, with what the audit takes
from the rest: the pin and each config's extension FQNs (read again on every run, as the
audit reads them), the command's arguments, the working folder (paths are shown from
it), whether the output is coloured (a terminal, `NO_COLOR`) and the installed
distributions. The entry holds what the audit wrote (stdout, stderr) and its exit code.
An audit that found the tree unusable (exit 2) or wrote a file (a baseline, Protocols)
is not stored. Entries are `static_cache`'s: checksummed, written whole, never trusted
when damaged.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import TextIO

from nemo_rl_workers.checks.static_cache import StaticCache
from nemo_rl_workers.checks.static_inputs import installed_fingerprint
from nemo_rl_workers.commands.cache import open_cache
from nemo_rl_workers.commands.exit_codes import EXIT_UNUSABLE
from nemo_rl_workers.findings.report import use_color
from nemo_rl_workers.tree.cache import guarded_digest, own_files
from nemo_rl_workers.tree.content_key import content_key

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


def audit_key(args: argparse.Namespace, out: TextIO) -> str | None:
    """The entry's key, or None when the tree or an EXTENSION argument cannot be used (the
    audit reports why)."""
    from nemo_rl_workers.checks.audit.extensions import UnusableExtension, extensions_from_args
    from nemo_rl_workers.checks.audit.run import UnusableTree, audit_inputs, checkout_root
    from nemo_rl_workers.checks.static_check import ImportRoots
    from nemo_rl_workers.checks.vllm_extension_rule import (
        MAX_MANIFEST_BYTES,
        installed_manifests,
    )
    from nemo_rl_workers.tree.checkout import project_pin
    from nemo_rl_workers.tree.source.reading import SourceProblem

    try:
        checkout = checkout_root(Path(args.nemo_rl))
        # What the audit takes of a config (its merged `defaults:` chain, resolved): the
        # extensions its fields name.
        extensions = [(e.fqn, e.origin) for e in extensions_from_args(args.extensions)]
    except (UnusableTree, UnusableExtension):
        return None
    problems: list[SourceProblem] = []
    files = audit_inputs(checkout, [Path(p) for p in args.path], problems)
    if args.baseline:
        files.append(Path(args.baseline))
    # vLLM's extension rule, each manifest under the limit its reader reads it with.
    manifests = [(version, str(path), guarded_digest(path, MAX_MANIFEST_BYTES))
                 for version, path in sorted(installed_manifests().items())]
    given = {k: v for k, v in sorted(vars(args).items()) if k not in ("cache_dir", "no_cache")}
    question = (given, os.getcwd(), use_color(out), sys.executable,
                installed_fingerprint(ImportRoots.of_this_interpreter()), extensions,
                project_pin(checkout), manifests, [str(p) for p in problems])
    return content_key("audit", question, files)


def run_audit_cached(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers audit ...`, from the cache when it validly holds the answer."""
    from nemo_rl_workers.commands.audit import run_audit

    if getattr(args, "no_cache", False) or args.write_baseline or getattr(
            args, "prune_baseline", False) or getattr(args, "emit_protocols", None):
        return run_audit(args, out, err)  # what writes a file runs every time
    usable, cache = open_cache(args, err)
    if not usable:
        return EXIT_UNUSABLE
    key = audit_key(args, out) if cache is not None else None
    if cache is None or key is None:  # (or the tree cannot be read: the audit says why)
        return run_audit(args, out, err)
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
    if code != EXIT_UNUSABLE:
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
