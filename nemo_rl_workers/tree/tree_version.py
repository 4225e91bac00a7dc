"""The release a NeMo-RL tree says it is, read from its `nemo_rl/package_info.py` as data.

Never imported (upstream's module runs `git` when imported): the file goes through the
guarded reader and is parsed; the version is its `__version__` where that is a string
literal, else built from the literals upstream composes it of (`MAJOR`, `MINOR`, `PATCH`
and `PRE_RELEASE`: `0.4.0rc0`). Anything else (no file, not parsable, other shapes) is
None, never an error.
"""

from __future__ import annotations

import ast
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular
from nemo_rl_workers.tree.source.parse import parse_text
from nemo_rl_workers.tree.source.reading import SourceProblem

PACKAGE_INFO = Path("nemo_rl") / "package_info.py"
_LIMIT = 64 * 1024  # upstream's is about 2 KB
_PARTS = ("MAJOR", "MINOR", "PATCH")
MAX_VERSION_CHARS = 40


def tree_version(root: Path) -> str | None:
    """The version of the tree at `root` (the folder holding `nemo_rl`), or None."""
    try:
        text = read_regular(root / PACKAGE_INFO, limit=_LIMIT, what="a module").decode("utf-8")
    except (FileRefused, OSError, ValueError):
        return None
    module = parse_text(text, root / PACKAGE_INFO)
    if isinstance(module, SourceProblem):
        return None
    literals: dict[str, object] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Constant):
            literals[stmt.targets[0].id] = stmt.value.value
    version = literals.get("__version__")
    if not isinstance(version, str):
        parts = [literals.get(name) for name in _PARTS]
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
            return None
        pre = literals.get("PRE_RELEASE", "")
        version = ".".join(map(str, parts)) + (pre if isinstance(pre, str) else "")
    printable = "".join(c for c in version if c.isprintable() and not c.isspace())
    return printable[:MAX_VERSION_CHARS] or None
