"""Baselines: today's findings, by rule, driver method, worker method and worker class
(never by line, so unrelated edits do not invalidate them)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.reading.source import SourceProblem, read_source

VERSION = 1
KEYS = ("rule", "driver", "method", "worker")

Key = tuple[str, str, str, str]


class BaselineError(ValueError):
    """A baseline file that cannot be used; `str()` is one line naming the file."""


def read_baseline(path: Path) -> set[Key]:
    text = read_source(path)  # the same guarded reader: regular file, bounded, UTF-8
    if isinstance(text, SourceProblem):
        raise BaselineError(f"baseline {text}")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise BaselineError(f"baseline {path}: is not JSON ({err})") from err
    entries = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BaselineError(
            f"baseline {path}: expected an object with a 'findings' list, as "
            "--write-baseline writes")
    keys: set[Key] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in KEYS):
            raise BaselineError(
                f"baseline {path}: findings[{index}] needs the strings {', '.join(KEYS)}")
        keys.add((entry["rule"], entry["driver"], entry["method"], entry["worker"]))
    return keys


def write_baseline(path: Path, findings: Iterable[Finding]) -> None:
    """Replace `path` atomically with the findings' keys (one per class of each cause),
    sorted (a stable diff)."""
    write_keys(path, {key for f in findings for key in f.keys})


def write_keys(path: Path, keys: Iterable[Key]) -> None:
    """Replace `path` atomically with these entries, sorted (its mode kept; a symlinked
    baseline has the file it names rewritten)."""
    entries = [dict(zip(KEYS, key, strict=True)) for key in sorted(set(keys))]
    text = json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n"
    write_atomic(path, text.encode("utf-8"))
