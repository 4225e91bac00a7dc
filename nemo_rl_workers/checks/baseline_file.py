"""Baseline files: the known findings a command accepts, one JSON object of string fields
per entry (`{"version": 1, "findings": [...]}`). Each command names its fields (the audit:
rule, driver, method, worker; `check`: rule, recipe, key); reading refuses anything that
is not what writing writes, in one line naming the file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.tree.source import SourceProblem, read_source

VERSION = 1

Entry = tuple[str, ...]


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


def _unprintable(entry: dict[str, object], fields: tuple[str, ...]) -> str | None:
    for key in fields:
        value = entry[key]
        if isinstance(value, str) and not value.isprintable():
            return key
    return None


def read_entries(path: Path, fields: tuple[str, ...]) -> set[Entry]:
    """The entries of a baseline, each the tuple of its `fields`, or BaselineError (one
    line) for anything that is not what `write_entries` writes: huge numbers, NaN,
    control characters, another shape."""
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
    found: set[Entry] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(k), str) for k in fields):
            raise BaselineError(
                f"baseline {shown}: findings[{index}] needs the strings {', '.join(fields)}")
        odd = _unprintable(entry, fields)
        if odd is not None:
            raise BaselineError(
                f"baseline {shown}: findings[{index}].{odd} holds a control character")
        found.add(tuple(entry[k] for k in fields))
    return found


def write_entries(path: Path, fields: tuple[str, ...], entries: Iterable[Entry]) -> None:
    """Replace `path` atomically with these entries, sorted (a stable diff; its mode
    kept; a symlinked baseline has the file it names rewritten, when that file lies in
    the link's own folder: never one out of it)."""
    rows = [dict(zip(fields, entry, strict=True)) for entry in sorted(set(entries))]
    text = json.dumps({"version": VERSION, "findings": rows}, indent=2) + "\n"
    write_atomic(path, text.encode("utf-8"))
