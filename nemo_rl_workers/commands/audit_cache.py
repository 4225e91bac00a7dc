"""`audit` answered from the cache when nothing it reads has changed.

An audit's answer is the computation `AUDIT` of its declared inputs (`AuditInputs`): the
bytes of every `.py`/`.pyi` file of the checkout's `nemo_rl` package, of its entry scripts
(`examples/`), of each `--path` root and of the installed stub folders
(`audit.run.audit_inputs` lists them, as the audit's `read_tree` reads them), the
baseline when one is given, the installed vllm-stubs' manifests (vLLM's extension rule),
the checkout's `pyproject.toml` (its vLLM pin) and each config given as an EXTENSION
(what the audit takes of it: the extension FQNs its merged `defaults:` chain names, read
again on every run, as the audit reads them), the command's arguments, the working
folder (paths are shown from it), whether the output is coloured (a terminal,
`NO_COLOR`), the installed distributions, this program's code and the interpreter. The
entry holds what the audit wrote (stdout, stderr) and its exit code. An audit that found
the tree unusable (exit 2) or wrote a file (a baseline, Protocols) is not stored.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from nemo_rl_workers.cache.digest import FileDigests, digests, file_digest, program_digest
from nemo_rl_workers.cache.key import Computation
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.checks.static.static_inputs import installed_fingerprint
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE
from nemo_rl_workers.findings.report import use_color
from nemo_rl_workers.tree.revisions import open_cache


@dataclass(frozen=True)
class AuditInputs:
    arguments: str  # the command's, as JSON (the cache's own flags left out)
    folder: str  # the working folder: paths are shown from it
    color: bool
    python: str
    installed: str  # the installed distributions (`installed_fingerprint`)
    extensions: tuple[tuple[str, str], ...]  # each EXTENSION config's (FQN, origin)
    pin: tuple[str | None, str | None]  # the checkout's vLLM pin, or why it is unknown
    manifests: tuple[tuple[str, str, str], ...]  # vllm-stubs' (version, file, digest)
    unlisted: tuple[str, ...]  # what could not be listed
    files: FileDigests  # every file the audit reads
    program: str  # this program's code and the interpreter


@dataclass(frozen=True)
class AuditAnswer:
    exit: int
    stdout: str
    stderr: str


AUDIT = Computation("audit", AuditInputs, AuditAnswer)


class _Captured(io.StringIO):
    """Captures what the audit writes, answering `isatty` as the real stream would (the
    audit colours its text on a terminal)."""

    def __init__(self, real: TextIO) -> None:
        super().__init__()
        self._real = real

    def isatty(self) -> bool:
        isatty = getattr(self._real, "isatty", None)
        return bool(isatty and isatty())


def audit_inputs_of(args: argparse.Namespace, out: TextIO) -> AuditInputs | None:
    """The audit's inputs, or None when the tree or an EXTENSION argument cannot be used (the
    audit reports why)."""
    from nemo_rl_workers.checks.audit.extensions import UnusableExtension, extensions_from_args
    from nemo_rl_workers.checks.audit.run import UnusableTree, audit_inputs, checkout_root
    from nemo_rl_workers.checks.static.static_check import ImportRoots
    from nemo_rl_workers.checks.vllm.vllm_extension_rule import (
        MAX_MANIFEST_BYTES,
        installed_manifests,
    )
    from nemo_rl_workers.tree.checkout import project_pin
    from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, SourceProblem

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
    manifests = tuple((version, str(path), file_digest(path, MAX_MANIFEST_BYTES))
                      for version, path in sorted(installed_manifests().items()))
    given = {k: v for k, v in sorted(vars(args).items()) if k not in ("cache_dir", "no_cache")}
    return AuditInputs(
        arguments=json.dumps(given, sort_keys=True, default=repr), folder=os.getcwd(),
        color=use_color(out), python=sys.executable,
        installed=installed_fingerprint(ImportRoots.of_this_interpreter()),
        extensions=tuple(extensions), pin=project_pin(checkout), manifests=manifests,
        unlisted=tuple(str(p) for p in problems),
        files=digests(files, MAX_SOURCE_BYTES), program=program_digest(MAX_SOURCE_BYTES))


def run_audit_cached(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers audit ...`, from the cache when it validly holds the answer."""
    from nemo_rl_workers.commands.audit import run_audit

    if getattr(args, "no_cache", False) or args.write_baseline or getattr(
            args, "prune_baseline", False) or getattr(args, "emit_protocols", None):
        return run_audit(args, out, err)  # what writes a file runs every time
    usable, cache = open_cache(args, err)
    if not usable:
        return EXIT_UNUSABLE
    inputs = audit_inputs_of(args, out) if cache is not None else None
    if cache is None or inputs is None:  # (or the tree cannot be read: the audit says why)
        return run_audit(args, out, err)
    hit = _load(cache, inputs, err)
    if hit is not None:
        out.write(hit.stdout)
        err.write(hit.stderr)
        return hit.exit
    captured_out, captured_err = _Captured(out), _Captured(err)
    code = run_audit(args, captured_out, captured_err)
    out.write(captured_out.getvalue())
    err.write(captured_err.getvalue())
    if code != EXIT_UNUSABLE:
        cache.put(AUDIT, inputs, AuditAnswer(code, captured_out.getvalue(),
                                             captured_err.getvalue()))
    return code


def _load(cache: Store, inputs: AuditInputs, err: TextIO) -> AuditAnswer | None:
    """The stored answer, or None; an entry that is there but not trusted is one line."""
    got = cache.get(AUDIT, inputs)
    if got.ignored is not None:
        print(f"nemo-rl-workers: warning: cache entry {cache.describe(AUDIT.key(inputs))} "
              f"{got.ignored}; ignored, the audit runs again", file=err)
    return got.payload
