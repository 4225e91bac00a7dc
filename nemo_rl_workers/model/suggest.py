"""'Did you mean ...?': the closest known names to a misspelled one.

Pure string matching (difflib) over names the caller already has: registered worker
FQNs, a section's known keys, a module's classes. Nothing here imports user code;
`importable_fqns` reads module file names and already-imported modules only.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import pkgutil
import sys
from collections.abc import Iterable

# Close enough to be a typo of the same name, not merely a similar one.
CUTOFF = 0.8
MAX_SUGGESTIONS = 3


def closest(word: str, candidates: Iterable[str], *, cutoff: float = CUTOFF) -> list[str]:
    """Up to three candidates close to `word`, best first; never `word` itself."""
    pool = sorted({c for c in candidates if c != word})
    return difflib.get_close_matches(word, pool, n=MAX_SUGGESTIONS, cutoff=cutoff)


def did_you_mean(names: Iterable[str]) -> str:
    """'did you mean A?' / 'did you mean A or B?'; '' for no names."""
    found = list(names)
    if not found:
        return ""
    if len(found) == 1:
        return f"did you mean {found[0]}?"
    return f"did you mean {', '.join(found[:-1])} or {found[-1]}?"


def module_classes(module_name: str) -> list[str]:
    """FQNs of the classes an already-imported module defines (not those it imports)."""
    module = sys.modules.get(module_name)
    if module is None:
        return []
    found = []
    for name, value in list(vars(module).items()):
        try:  # a member's metaclass may raise on any attribute: it is then no suggestion
            if isinstance(value, type) and value.__module__ == module_name:
                found.append(f"{module_name}.{name}")
        except BaseException:  # noqa: BLE001, S112 - untrusted code, whatever it raises
            continue
    return found


def sibling_modules(module_name: str) -> list[str]:
    """Modules next to `module_name`: in its already-imported parent package, or top-level.

    Only file names are listed; no module is imported.
    """
    parent, _, _ = module_name.rpartition(".")
    if not parent:
        return [m.name for m in pkgutil.iter_modules()]
    search = getattr(sys.modules.get(parent), "__path__", None)
    if search is None:
        return []
    return [f"{parent}.{m.name}" for m in pkgutil.iter_modules(search)]


def importable_fqns(fqn: str, missing_module: str | None) -> list[str]:
    """Close FQNs that could be meant: a sibling of the module that was not found, or a
    class of the module that was (its attribute was not)."""
    module_name = fqn.rpartition(".")[0]
    if missing_module is None:
        return closest(fqn, module_classes(module_name))
    if not module_name.startswith(missing_module):
        return []
    rest = fqn[len(missing_module):]
    return [m + rest for m in closest(missing_module, sibling_modules(missing_module))
            if _defines(m, rest.lstrip("."))]


def _defines(module_name: str, dotted: str) -> bool:
    """Whether `module_name`'s source defines the class `dotted` names (its first part, at
    the top level; deeper parts are modules, taken on trust). Read, never imported: a
    sibling is only suggested where the class would be found."""
    name = dotted.split(".")[0]
    if "." in dotted:
        return True
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):  # a parent that cannot be found: nothing to offer
        return False
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py"):
        return False
    try:
        with open(origin, encoding="utf-8") as source:
            tree = ast.parse(source.read(), origin)
    except (OSError, SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.ClassDef) and node.name == name for node in tree.body)
