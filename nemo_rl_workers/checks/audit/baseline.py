"""The audit's baselines: today's findings, by rule, driver method, worker method and
worker class (never by line, so unrelated edits do not invalidate them). The file's format
and its guarded reading are `checks.baseline_file`'s, shared with `check --baseline`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.checks.baseline_file import (
    MAX_DIGITS,
    VERSION,
    BaselineError,
    read_entries,
    write_entries,
)

__all__ = ["KEYS", "MAX_DIGITS", "VERSION", "BaselineError", "Key", "read_baseline",
           "write_baseline", "write_keys"]

KEYS = ("rule", "driver", "method", "worker")

Key = tuple[str, str, str, str]


def read_baseline(path: Path) -> set[Key]:
    """The entries of a baseline, or BaselineError (one line) for anything that is not what
    --write-baseline writes: huge numbers, NaN, control characters, another shape."""
    return {(rule, driver, method, worker)
            for rule, driver, method, worker in read_entries(path, KEYS)}


def write_baseline(path: Path, findings: Iterable[Finding]) -> None:
    """Replace `path` atomically with the findings' keys (one per class of each cause),
    sorted (a stable diff)."""
    write_keys(path, {key for f in findings for key in f.keys})


def write_keys(path: Path, keys: Iterable[Key]) -> None:
    """Replace `path` atomically with these entries, sorted (its mode kept; a symlinked
    baseline has the file it names rewritten)."""
    write_entries(path, KEYS, keys)
