"""Baselines: today's findings, by rule, driver method, worker method and worker class
(never by line, so unrelated edits do not invalidate them)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.tree.source import SourceProblem, read_source

VERSION = 1
KEYS = ("rule", "driver", "method", "worker")

Key = tuple[str, str, str, str]


class BaselineError(ValueError):
    """A baseline file that cannot be used; `str()` is one line naming the file."""


MAX_DIGITS = 100
"""A number in a baseline longer than this is refused before it is converted (no entry
holds a number; Python refuses to convert one of over 4,300 digits at all)."""


def _number(text: str) -> int | float:
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_DIGITS:
        raise BaselineError(f"holds a {digits}-digit number")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _constant(name: str) -> float:
    raise BaselineError(f"holds {name}, which JSON does not allow")


def _unprintable(entry: dict[str, object]) -> str | None:
    for key in KEYS:
        value = entry[key]
        if isinstance(value, str) and not value.isprintable():
            return key
    return None


def read_baseline(path: Path) -> set[Key]:
    """The entries of a baseline, or BaselineError (one line) for anything that is not what
    --write-baseline writes: huge numbers, NaN, control characters, another shape."""
    text = read_source(path, "a baseline")  # the guarded reader: regular, bounded, UTF-8
    if isinstance(text, SourceProblem):
        raise BaselineError(f"baseline {text}")
    shown = one_line(str(path))
    try:
        data = json.loads(text, parse_int=_number, parse_float=_number,
                          parse_constant=_constant)
    except BaselineError as err:  # a value no baseline holds, refused while parsing
        raise BaselineError(f"baseline {shown}: {err}") from err
    except (ValueError, RecursionError) as err:  # JSONDecodeError is a ValueError
        raise BaselineError(f"baseline {shown}: is not JSON ({one_line(str(err))})") from err
    entries = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BaselineError(
            f"baseline {shown}: expected an object with a 'findings' list, as "
            "--write-baseline writes")
    keys: set[Key] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in KEYS):
            raise BaselineError(
                f"baseline {shown}: findings[{index}] needs the strings {', '.join(KEYS)}")
        odd = _unprintable(entry)
        if odd is not None:
            raise BaselineError(
                f"baseline {shown}: findings[{index}].{odd} holds a control character")
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
