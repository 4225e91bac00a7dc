"""What one module imports and binds, from one streaming pass: read, parse, collect, drop.

For following imports across many modules without modelling them (`verify --static`
follows every module a class's module imports to bound what the checker will read, and
keys its cache by them): an outline keeps names only, never the syntax tree, so the
walk's memory is one module's parse at a time. `Outlines` reads each module once for
every question asked of it in one run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.tree.source.imports import imported_modules, is_package_file
from nemo_rl_workers.tree.source.parse import parse_file
from nemo_rl_workers.tree.source.reading import SourceProblem


@dataclass(frozen=True)
class Outline:
    """One module's imports and bindings, as names."""

    # The absolute names it imports, anywhere (function-level too), in order: `import
    # a.b` gives a.b; `from a import b` gives a and a.b (b may be a submodule).
    imports: tuple[str, ...]
    # The top-level packages its absolute imports name (relative ones are its own).
    absolute_tops: frozenset[str]
    # Names it binds anywhere as a class, an import or a plain assignment.
    binds: frozenset[str]
    # Its top-level functions' names.
    functions: frozenset[str]


def module_outline(file: Path, module: str) -> Outline | SourceProblem:
    """The outline of the module `module` whose source is `file`, or why there is none."""
    parsed = parse_file(file)
    if isinstance(parsed, SourceProblem):
        return parsed
    package = is_package_file(file)
    imports: list[str] = []
    tops: set[str] = set()
    binds: set[str] = set()
    for node in ast.walk(parsed):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.extend(imported_modules(node, module, package))
            if isinstance(node, ast.Import):
                tops.update(alias.name.split(".")[0] for alias in node.names)
            elif node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
            binds.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ClassDef):
            binds.add(node.name)
        elif isinstance(node, ast.Assign):
            binds.update(t.id for t in node.targets if isinstance(t, ast.Name))
    functions = frozenset(node.name for node in parsed.body
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return Outline(tuple(imports), frozenset(tops), frozenset(binds), functions)


def module_imports(file: Path, module: str) -> Iterator[str]:
    """The absolute names `file` (module `module`) imports (`Outline.imports`); nothing
    for a file that cannot be read (over the cap, not text) or parsed."""
    found = module_outline(file, module)
    if not isinstance(found, SourceProblem):
        yield from found.imports


@dataclass
class Outlines:
    """Outlines read once each, by (file, module name)."""

    _read: dict[tuple[Path, str], Outline | SourceProblem] = field(default_factory=dict)

    def of(self, file: Path, module: str) -> Outline | SourceProblem:
        key = (file, module)
        if key not in self._read:
            self._read[key] = module_outline(file, module)
        return self._read[key]
