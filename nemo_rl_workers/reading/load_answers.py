"""A config load's answers kept between runs: the questions they answer, what may be kept.

Parsing YAML (through OmegaConf's loader) and resolving `${...}` (OmegaConf again) are
most of a cached `check`'s time, importing OmegaConf alone a fifth of it. Two answers are
kept by whoever holds a `LoadAnswers` (a content cache, salted with this program's code):

- a file's parse, asked by the name reports give the file and its exact text: the data
  and each key's line;
- a resolution, asked by the merged data (the `defaults:` chain and the overrides already
  applied), the environment variables it interpolates (`${oc.env:NAME}`, with or without
  a default: each one's value, or that it is unset) and which keys the caller reads
  (`needed`, by name). The resolvers are the loader's own (upstream's arithmetic,
  `oc.env`); none reads anything else.

Only what JSON gives back exactly is kept and asked about (string keys; str, int, float,
bool, None, lists): an integer key is parsed and resolved every time. A load that fails
is never kept: its error is made afresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from nemo_rl_workers.reading.recorded_reads import ENVIRON, note_environ_read, note_whole_environ

# `${oc.env:NAME}` and `${oc.env:NAME,default}`; a name OmegaConf's grammar allows quoted.
_ENV_NAME = re.compile(r"""oc\.env\s*:\s*['"]?([A-Za-z_][A-Za-z0-9_]*)""")
MAX_DEPTH = 200


@dataclass(frozen=True)
class KeptParse:
    """A file's parse: its data, and each key's (file, line)."""

    data: dict[str, Any]
    lines: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class KeptResolution:
    config: dict[str, Any]


_Kept = TypeVar("_Kept", KeptParse, KeptResolution)


class LoadAnswers(Protocol):
    """Where load answers are kept, by question (see the module docstring)."""

    def get(self, question: str, kind: type[_Kept]) -> _Kept | None: ...

    def put(self, question: str, answer: KeptParse | KeptResolution) -> None: ...


def parse_question(shown: str, text: str) -> str:
    digest = hashlib.sha256(b"parse\0")
    digest.update(shown.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(text.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def parse_answer(data: dict[str, Any], lines: dict[str, tuple[str, int]]) -> KeptParse | None:
    """What is kept of a parse, or None where it cannot be kept exactly."""
    if not storable(data):
        return None
    return KeptParse(data, tuple((path, file, line) for path, (file, line) in lines.items()))


def parse_from(answer: KeptParse) -> tuple[dict[str, Any], dict[str, tuple[str, int]]]:
    return answer.data, {path: (file, line) for path, file, line in answer.lines}


def resolution_question(data: dict[str, Any],
                        needed: Callable[[str], bool] | None) -> str | None:
    """The question resolving `data` answers, or None where it is not asked (data JSON
    does not give back exactly, an environment variable named by interpolation)."""
    if not storable(data):
        return None
    names = interpolated_environ(data)
    if names is None:
        return None
    environ = [[name, ENVIRON.get(name)] for name in sorted(names)]
    who = None if needed is None else f"{needed.__module__}.{needed.__qualname__}"
    digest = hashlib.sha256(b"resolve\0")
    digest.update(json.dumps([environ, who], ensure_ascii=True).encode() + b"\0")
    digest.update(json.dumps(data, ensure_ascii=True, allow_nan=True).encode("ascii"))
    return digest.hexdigest()


def interpolated_environ(data: object) -> set[str] | None:
    """The environment variables `data` interpolates (`${oc.env:NAME}`), or None where a
    name is not written out (built by interpolation, say)."""
    names: set[str] = set()
    for text in _strings(data):
        found = _ENV_NAME.findall(text)
        if text.count("oc.env") != len(found):
            return None
        names.update(found)
    return names


def note_interpolated_environ(data: object) -> None:
    """Record, for a kept verdict, the variables resolving `data` reads through OmegaConf
    (every one, where a name is not written out)."""
    names = interpolated_environ(data)
    if names is None:
        note_whole_environ()
        return
    for name in names:
        note_environ_read(name)


def storable(value: object, depth: int = 0, leaves: tuple[type, ...] = ()) -> bool:
    """Whether JSON gives `value` back exactly, its types included; an instance of
    `leaves` counts as a value whose `repr` says it whole (a key, never read back)."""
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, (str, bool, int, float, *leaves)):
        return True
    if isinstance(value, list):
        return all(storable(item, depth + 1, leaves) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and storable(item, depth + 1, leaves)
                   for key, item in value.items())
    return False


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if "oc.env" in value else []
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    return []
