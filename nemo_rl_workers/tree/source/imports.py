"""The one import resolver: what an import statement binds, as absolute dotted names.

Every reader of imports (the model's module-level imports, the drivers' and the tree
rules' function-level imports, the static path's import walk, the guard's class lookup)
resolves them here, by Python's own rule (`importlib._bootstrap._resolve_name`): a
relative import of level N written in a module resolves against the module's package
(the module itself for a package's `__init__`), N - 1 packages up. One that climbs above
the top-level package (or is written in a top-level module) is an ImportError when it
runs, so it binds nothing here. Re-exports (`from .impl import Worker` in an
`__init__`) are followed by name resolution (`resolve.resolve_fqn`), which reads these
bindings.
"""

from __future__ import annotations

import ast
from pathlib import PurePath

PACKAGE_FILES = ("__init__.py", "__init__.pyi")


def is_package_file(file: str | PurePath) -> bool:
    """Whether `file` is a package's `__init__` (its relative imports start at itself)."""
    return PurePath(file).name in PACKAGE_FILES


def absolute_module(importer: str, is_package: bool, name: str | None, level: int) -> str | None:
    """The absolute module `from <level dots><name> import ...` names when written in
    module `importer` (a package's `__init__` when `is_package`); None where Python
    would refuse it (above the top-level package, or no module named at all)."""
    if level == 0:
        return name or None
    package = importer if is_package else importer.rpartition(".")[0]
    if not package:
        return None  # a relative import in a top-level module: no parent package
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None  # beyond the top-level package
    return f"{bits[0]}.{name}" if name else bits[0]


def import_bindings(stmt: ast.Import | ast.ImportFrom, importer: str,
                    is_package: bool) -> dict[str, str]:
    """Local name -> the absolute dotted name it is bound to by one import statement:
    `import a.b` binds `a` (to `a`), `import a.b as c` binds `c` to `a.b`, `from m import
    x as y` binds `y` to `m.x`; `from m import *` binds nothing that can be named."""
    bound: dict[str, str] = {}
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                bound[alias.asname] = alias.name
            else:
                top = alias.name.partition(".")[0]
                bound[top] = top
        return bound
    source = absolute_module(importer, is_package, stmt.module, stmt.level)
    if source is None:
        return bound
    for alias in stmt.names:
        if alias.name != "*":
            bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def function_imports(node: ast.AST, importer: str, is_package: bool) -> dict[str, str]:
    """The names the imports anywhere in a function's body bind (upstream imports actor
    classes lazily, inside the function that starts them); a later import of the same
    name wins."""
    found: dict[str, str] = {}
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Import, ast.ImportFrom)):
            found.update(import_bindings(inner, importer, is_package))
    return found


def imported_modules(stmt: ast.Import | ast.ImportFrom, importer: str,
                     is_package: bool) -> list[str]:
    """The modules an import statement may load: each `import a.b`'s `a.b`; for `from m
    import x`, `m` and `m.x` (x may be a submodule)."""
    if isinstance(stmt, ast.Import):
        return [alias.name for alias in stmt.names]
    source = absolute_module(importer, is_package, stmt.module, stmt.level)
    if source is None:
        return []
    return [source, *(f"{source}.{a.name}" for a in stmt.names if a.name != "*")]
