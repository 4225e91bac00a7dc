"""The one size rule of the static path: a module the checker would follow from the class's
module that is over the source cap is refused before any checker runs, so `verify
--static` never holds a module larger than the tree stage would read. What each module
imports is its outline (`tree.source.outline`, read as the tree stage reads source).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from nemo_rl_workers.tree.source.lookup import ImportRoots, Located, RootListing, locate
from nemo_rl_workers.tree.source.outline import Outlines
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, SourceProblem

_STDLIB = set(sys.stdlib_module_names) | {"__future__"}
MAX_FOLLOWED = 5_000
"""At most this many modules are followed from one class's module (sizes are stats)."""


def installed(path: Path) -> bool:
    """A file of an installed distribution (the checker is told to skip those)."""
    return any(part.endswith("-packages") for part in path.parts)


def with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _size(file: Path) -> int:
    try:
        return os.stat(file).st_size
    except OSError:
        return 0  # what cannot be stat'ed cannot be read by the checker either


def oversized_import(start: Located, roots: ImportRoots,
                     listing: RootListing | None = None,
                     outlines: Outlines | None = None) -> str | None:
    """Why the class's module cannot be judged within the source cap: it, or a module it
    imports (directly or not, outside installed distributions and the standard library),
    is over MAX_SOURCE_BYTES. None when every followed module is within it. `outlines`:
    the modules already read in this run (each is read once)."""
    outlines = outlines if outlines is not None else Outlines()
    seen: set[str] = set()
    todo: list[tuple[str, Path, str | None]] = [(start.module, start.file, None)]
    while todo and len(seen) < MAX_FOLLOWED:
        module, file, importer = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        size = _size(file)
        if size > MAX_SOURCE_BYTES:
            how = f"{module} ({file})" if importer is None else (
                f"{module} ({file}), which {importer} imports,")
            return (f"{how} is {size} bytes, over the {MAX_SOURCE_BYTES}-byte limit for a "
                    "module; the checker would read it whole")
        read = outlines.of(file, module)
        for imported in () if isinstance(read, SourceProblem) else read.imports:
            for name in with_parents(imported):
                if name in seen or name.split(".")[0] in _STDLIB:
                    continue
                found = locate(name, roots, listing)
                if isinstance(found, Located) and not installed(found.file):
                    todo.append((name, found.file, module))
    return None
