"""Where a loaded config's keys were written, kept for the sections handed on.

`load_config` returns plain dicts (what NeMo-RL passes around), so the file and line
of each key cannot travel inside them. Instead the loader remembers, by identity,
every mapping of the configs it loaded last, with its dotted path; `Policy` and
`VllmGeneration` get the section a user passes (`config["policy"]`) and so can put
the file and line on the problems they raise, as the CLI does. A section that was
copied or built by hand has no origin, and its problems carry none.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from nemo_rl_workers.errors import Problem, WorkerConfigError

# dotted path -> (file, 1-based line), as nemo_rl_workers.reading.loader.Lines.
Lines = Mapping[str, tuple[str, int]]

# Origins of this many loaded configs are kept (each holds its mappings alive, so an
# id is never reused while it is remembered).
KEEP_CONFIGS = 16


@dataclass(frozen=True)
class Origin:
    """A mapping of a loaded config: its dotted path there, and the config's key lines."""

    mapping: Mapping[str, object]
    path: str  # '' for the whole config
    file: str
    lines: Lines


_BY_ID: dict[int, Origin] = {}
_LOADED: deque[list[int]] = deque()


def _mappings(value: object, path: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    if isinstance(value, Mapping):
        yield path, value
        for key, child in value.items():
            yield from _mappings(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _mappings(item, f"{path}[{i}]")


def remember(config: Mapping[str, object], file: str, lines: Lines) -> None:
    """Record every mapping of a config `load_config` returns (the oldest are forgotten)."""
    ids: list[int] = []
    for path, mapping in _mappings(config, ""):
        _BY_ID[id(mapping)] = Origin(mapping, path, file, lines)
        ids.append(id(mapping))
    _LOADED.append(ids)
    while len(_LOADED) > KEEP_CONFIGS:
        for old in _LOADED.popleft():
            _BY_ID.pop(old, None)


def origin_of(section: object) -> Origin | None:
    """Where `section` sits in a config loaded from a file, if it is one of its mappings."""
    found = _BY_ID.get(id(section))
    return found if found is not None and found.mapping is section else None


def _enclosing(path: str) -> str:
    """`a.b` of `a.b.c` and of `a.b[1]`; '' at the top."""
    return path.rpartition(".")[0] if "." in path else path.rpartition("[")[0]


def locate(file: str, lines: Lines, problem: Problem, key: str | None = None) -> Problem:
    """The problem at the file and line that set its key (or its closest parent key)."""
    path = problem.path if key is None else key
    while path:
        if path in lines:
            return problem.located(*lines[path])
        path = _enclosing(path)
    return problem.located(file)


def same_file(one: str, other: str) -> bool:
    """Whether two names the loader gave (as given, or normalised) are one file."""
    return os.path.normpath(one) == os.path.normpath(other)


def own_line(file: str, lines: Lines, path: str) -> int | None:
    """The line where `file` itself writes `path` or its closest enclosing key (a value
    inherited through `defaults:` sits under a block the file may still write), or None."""
    while path:
        found = lines.get(path)
        if found is not None and same_file(found[0], file):
            return found[1]
        path = _enclosing(path)
    return None


def _relocated(origin: Origin, path: str, problems: Iterable[Problem]) -> list[Problem]:
    """Problems named under `path` (how the caller calls the section), located by the
    section's real path in its file."""
    located: list[Problem] = []
    for problem in problems:
        rest = problem.path[len(path):] if problem.path.startswith(path) else None
        if problem.file is not None or rest is None or rest[:1] not in ("", ".", "["):
            located.append(problem)
            continue
        located.append(locate(origin.file, origin.lines, problem, key=origin.path + rest))
    return located


@contextmanager
def problems_located(section: object, path: str) -> Generator[None]:
    """Re-raise a WorkerConfigError about `section` (called `path`) with files and lines."""
    try:
        yield
    except WorkerConfigError as err:
        origin = origin_of(section)
        if origin is None:
            raise
        raise WorkerConfigError(_relocated(origin, path, err.problems)) from err
