"""Installed distributions' entry points and versions, read from their metadata folders.

What `importlib.metadata.entry_points(group=...)` and `.version(name)` answer, for the
folders on `sys.path`, without importing `importlib.metadata` (it brings `email`, `csv` and
`zipfile`: a quarter of a cached `check`'s own start-up). Each `*.dist-info` and
`*.egg-info` folder is a distribution; the first of a name along the path wins, as it does
for `importlib.metadata`. Zip files on the path (a zipped standard library) hold no worker
plugin and are not read. tests/structure checks both answers agree on this environment.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular

_SUFFIXES = (".dist-info", ".egg-info")
_MAX_TEXT = 1 << 20  # an entry_points.txt or METADATA larger than this is not read


@dataclass(frozen=True)
class EntryPoint:
    """One entry point: `name = module:attr` in `group` of distribution `dist`."""

    name: str
    value: str
    group: str
    dist: str

    def load(self) -> object:
        """The object it names (importing its module), as importlib.metadata loads it."""
        module, _, attr = self.value.partition(":")
        found: object = importlib.import_module(module.strip())
        for part in filter(None, attr.split("[")[0].strip().split(".")):
            found = getattr(found, part)
        return found


def normalize(name: str) -> str:
    """PEP 503's form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _distributions(path: Sequence[str] | None) -> Iterator[tuple[str, str]]:
    """(normalized name, metadata folder) of each distribution, first of a name only."""
    seen: set[str] = set()
    for entry in sys.path if path is None else path:
        folder = entry or os.curdir
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # a zip file or a missing folder
            continue
        for name in names:
            if not name.endswith(_SUFFIXES):
                continue
            dist = normalize(name.rsplit(".", 1)[0].split("-")[0])
            if dist in seen:
                continue
            seen.add(dist)
            yield dist, os.path.join(folder, name)


def _text(path: str) -> str | None:
    """A metadata file through the guarded reader: a FIFO or a device named like one, on
    any folder of the path, must not hang every command."""
    try:
        return read_regular(Path(path), limit=_MAX_TEXT, what="a metadata file").decode(
            "utf-8", "replace")
    except FileRefused:
        return None


def entry_points(group: str, path: Sequence[str] | None = None) -> list[EntryPoint]:
    """Every entry point of `group` in the distributions on `path` (default `sys.path`)."""
    found: list[EntryPoint] = []
    for dist, folder in _distributions(path):
        text = _text(os.path.join(folder, "entry_points.txt"))
        if text is None or f"[{group}]" not in text:
            continue
        section = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif section == group and "=" in line:
                name, _, value = line.partition("=")
                found.append(EntryPoint(name.strip(), value.strip(), group, dist))
    return found


def version(name: str, path: Sequence[str] | None = None) -> str | None:
    """The installed version of distribution `name`, or None when it is not installed."""
    wanted = normalize(name)
    for dist, folder in _distributions(path):
        if dist != wanted:
            continue
        for file in ("METADATA", "PKG-INFO"):
            text = _text(os.path.join(folder, file))
            for line in (text or "").splitlines():
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
                if not line.strip():
                    break  # the headers end at the first blank line
        return None
    return None
