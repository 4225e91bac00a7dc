"""What a module imports, read as the tree stage reads source (bounded, its coding cookie
honoured), and the one size rule of the static path: a module the checker would follow
from the class's module that is over the source cap is refused before any checker runs,
so `verify --static` never holds a module larger than the tree stage would read.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from nemo_rl_workers.tree.source.lookup import ImportRoots, Located, RootListing, locate
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, SourceProblem, read_source

_STDLIB = set(sys.stdlib_module_names) | {"__future__"}
MAX_FOLLOWED = 5_000
"""At most this many modules are followed from one class's module (sizes are stats)."""


def installed(path: Path) -> bool:
    """A file of an installed distribution (the checker is told to skip those)."""
    return any(part.endswith("-packages") for part in path.parts)


def module_imports(file: Path, module: str) -> Iterator[str]:
    """The absolute names `file` (module `module`) imports, with `from a import b`
    yielding both `a` and `a.b` (b may be a submodule); nothing for a file that cannot be
    read (over the cap, not text) or parsed."""
    text = read_source(file)
    if isinstance(text, SourceProblem):
        return
    try:
        tree = ast.parse(text, str(file))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    package = module if file.name.startswith("__init__.") else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                keep = len(parts) - (node.level - 1)
                if keep < 0:
                    continue
                base = ".".join([*parts[:keep], *([base] if base else [])])
            if not base:
                continue
            yield base
            yield from (f"{base}.{a.name}" for a in node.names if a.name != "*")


def with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _size(file: Path) -> int:
    try:
        return os.stat(file).st_size
    except OSError:
        return 0  # what cannot be stat'ed cannot be read by the checker either


def oversized_import(start: Located, roots: ImportRoots,
                     listing: RootListing | None = None) -> str | None:
    """Why the class's module cannot be judged within the source cap: it, or a module it
    imports (directly or not, outside installed distributions and the standard library),
    is over MAX_SOURCE_BYTES. None when every followed module is within it."""
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
        for imported in module_imports(file, module):
            for name in with_parents(imported):
                if name in seen or name.split(".")[0] in _STDLIB:
                    continue
                found = locate(name, roots, listing)
                if isinstance(found, Located) and not installed(found.file):
                    todo.append((name, found.file, module))
    return None
