"""Which name in a class's ancestry the source cannot resolve, for `--static`'s undecided verdicts.

A type checker takes a class it cannot find (its module is not on the path: a fork's
worker, a package not installed here) as `Any`, and a class inheriting from `Any` as
having every member: every Protocol check then passes. `static_check` asks the checker
whether that happened (a probe line that must be an error for any known class); this
module says *why*, read from source as the checker would find it (`locate`), importing
nothing: the first name, walking the class and then its bases depth-first, whose module
cannot be found, or that its module does not define.
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass, field

from nemo_rl_workers.tree.source.build import model_module
from nemo_rl_workers.tree.source.lookup import ImportRoots, locate
from nemo_rl_workers.tree.source.model import ClassInfo, Module, SourceTree
from nemo_rl_workers.tree.source.reading import SourceProblem, read_source
from nemo_rl_workers.tree.source.resolve import MAX_HOPS, base_names, resolve_local

MAX_CLASSES = 200
"""Classes walked for one question at most (real hierarchies stay under 20)."""


@dataclass
class Ancestry:
    """Resolves classes from source along one interpreter's import path, lazily."""

    roots: ImportRoots
    tree: SourceTree = field(default_factory=lambda: SourceTree(roots=()))
    _missing: dict[str, str] = field(default_factory=dict)

    def _module(self, name: str) -> Module | str:
        """The module `name`, modelled now if needed, or why it cannot be."""
        if name in self.tree.modules:
            return self.tree.modules[name]
        if name in self._missing:
            return self._missing[name]
        found = locate(name, self.roots)
        if isinstance(found, str):
            self._missing[name] = found
            return found
        text = read_source(found.file)
        if isinstance(text, SourceProblem):
            self._missing[name] = str(text)
            return str(text)
        model_module(self.tree, found.file, name, text)
        module = self.tree.modules.get(name)
        if module is None:
            problem = self.tree.problems[-1] if self.tree.problems else None
            self._missing[name] = str(problem) if problem else f"{found.file} cannot be modelled"
            return self._missing[name]
        return module

    def resolve(self, fqn: str) -> ClassInfo | str:
        """The class statement `fqn` names (through re-exports and aliases), or why not."""
        current = fqn
        for _ in range(MAX_HOPS):
            if current in self.tree.classes:
                return self.tree.classes[current]
            parts = current.split(".")
            module: Module | None = None
            why: str | None = None
            rest: list[str] = []
            for cut in range(len(parts) - 1, 0, -1):
                got = self._module(".".join(parts[:cut]))
                if isinstance(got, Module):
                    module, rest = got, parts[cut:]
                    break
                why = why or got
            through = "" if current == fqn else f" (through {current})"
            if module is None:
                return f"{why or f'{current!r} names no module'}{through}"
            head, tail = rest[0], rest[1:]
            if head in module.classes:
                info: ClassInfo | None = module.classes[head]
                for name in tail:
                    info = self.tree.classes.get(f"{info.fqn}.{name}") if info else None
                return info or f"{current} is not defined in {module.file}"
            if head in module.imports:
                current = ".".join([module.imports[head], *tail])
                continue
            alias = module.assignments.get(head)
            target = ast.unparse(alias) if alias is not None else ""
            if all(part.isidentifier() for part in target.split(".")):
                current = ".".join([resolve_local(module, target), *tail])
                continue
            if alias is not None:
                return f"{current} is bound by an expression in {module.file}{through}"
            return (why if why is not None and len(rest) > 1
                    else f"module {module.name} defines no {head!r} ({module.file}){through}")
        return f"{fqn} is re-exported through more than {MAX_HOPS} names"

    def unresolved(self, fqn: str) -> str | None:
        """Why `fqn` or a class it inherits from cannot be resolved from source, or None."""
        todo: list[tuple[str, str | None]] = [(fqn, None)]  # (name, the class naming it)
        seen: set[str] = set()
        while todo and len(seen) < MAX_CLASSES:
            name, child = todo.pop()
            if name in seen or _known_elsewhere(name):
                continue
            seen.add(name)
            found = self.resolve(name)
            if isinstance(found, str):
                what = f"{name}" if child is None else f"base {name} (of {child})"
                return f"{what} cannot be resolved here: {found}"
            todo.extend((base, found.fqn) for base in reversed(base_names(self.tree, found)))
        return None


def _known_elsewhere(name: str) -> bool:
    """Builtins and the standard library: the checkers know them from typeshed."""
    top = name.split(".")[0]
    return ("." not in name and hasattr(builtins, name)) or top in sys.stdlib_module_names


def unresolved_ancestor(fqn: str, roots: ImportRoots) -> str | None:
    """Why `fqn`, or a class in its ancestry, cannot be resolved along `roots`; None when
    every one is found in source."""
    return Ancestry(roots).unresolved(fqn)

