"""Names to classes and classes to MROs, from the model alone.

A base written `Impl`, `mod.Impl` or imported through a package's re-export resolves
to the class statement that defines it (following imports, relative ones included,
and `X = Y` aliases, a bounded number of hops). The MRO is C3's, as Python computes
it; a class that is its own ancestor, or bases C3 cannot order, is a problem on the
`Mro`, never a hang or an exception.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from nemo_rl_workers.tree.source.model import ClassInfo, Function, Module, Mro, SourceTree

MAX_HOPS = 32
MAX_MRO_DEPTH = 200
"""A class inheriting through more ancestors than this gets a problem, not an MRO (real
hierarchies stay under 20; recursion and C3's quadratic merge must stay bounded)."""
# Bases that add no methods a worker call could reach (typing's machinery, object).
IGNORED_BASES = frozenset({
    "object", "builtins.object", "typing.Protocol", "typing.Generic", "typing_extensions.Protocol",
    "typing_extensions.Generic", "abc.ABC", "Protocol", "Generic", "ABC",
})


def _split(fqn: str, tree: SourceTree) -> tuple[Module, list[str]] | None:
    """The longest module prefix of `fqn` in the tree, and the names after it."""
    parts = fqn.split(".")
    for cut in range(len(parts), 0, -1):
        module = tree.module(".".join(parts[:cut]))
        if module is not None:
            return module, parts[cut:]
    return None


def resolve_fqn(tree: SourceTree, fqn: str) -> ClassInfo | None:
    """The class `fqn` names, following re-exports and aliases; None if not in the tree."""
    return tree.remembered(("class", fqn), lambda: _resolve_fqn(tree, fqn))


def _resolve_fqn(tree: SourceTree, fqn: str) -> ClassInfo | None:
    seen: set[str] = set()
    current = fqn
    for _ in range(MAX_HOPS):
        if current in tree.classes:
            return tree.classes[current]
        if current in seen:
            return None
        seen.add(current)
        split = _split(current, tree)
        if split is None:
            return None
        module, rest = split
        if not rest:
            return None
        head, tail = rest[0], rest[1:]
        if head in module.classes:
            found: ClassInfo | None = module.classes[head]
            for name in tail:  # a nested class
                found = tree.classes.get(f"{found.fqn}.{name}") if found else None
            return found
        if head in module.imports:
            current = ".".join([module.imports[head], *tail])
            continue
        alias = module.assignments.get(head)
        target = dotted_name(alias) if alias is not None else None
        if target is None:
            return None
        current = ".".join([resolve_local(module, target), *tail])
    return None


def resolve_function(tree: SourceTree, fqn: str) -> Function | None:
    """The module-level function `fqn` names, following re-exports (`from .x import f`
    in a package); None if it is not one of the tree's."""
    return tree.remembered(("function", fqn), lambda: _resolve_function(tree, fqn))


def _resolve_function(tree: SourceTree, fqn: str) -> Function | None:
    current = fqn
    for _ in range(MAX_HOPS):
        split = _split(current, tree)
        if split is None:
            return None
        module, rest = split
        if len(rest) != 1:
            return None
        if rest[0] in module.functions:
            return module.functions[rest[0]]
        if rest[0] not in module.imports or module.imports[rest[0]] == current:
            return None
        current = module.imports[rest[0]]
    return None


def own_nodes(stmt: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a statement, not entering function or class bodies it defines."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                      ast.Lambda)):
                stack.append(child)


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a name or a chain of attributes on one, else None (a loop: a chain
    nested past the recursion limit is no error)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def resolve_local(module: Module, dotted: str) -> str:
    """The absolute name `dotted`, as written in `module`, refers to."""
    head, _, rest = dotted.partition(".")
    if head in module.imports:
        target = module.imports[head]
    elif head in module.classes or head in module.functions or head in module.assignments:
        target = f"{module.name}.{head}"
    else:
        target = head  # a builtin, or unknown
    return f"{target}.{rest}" if rest else target


def base_names(tree: SourceTree, info: ClassInfo) -> list[str]:
    """The absolute names of a class's bases (subscripts such as Generic[T] unwrapped)."""
    module = tree.modules.get(info.module)
    out: list[str] = []
    for base in info.node.bases:
        node = base.value if isinstance(base, ast.Subscript) else base
        dotted = dotted_name(node)
        if dotted is None or module is None:
            continue
        name = resolve_local(module, dotted)
        head = dotted.partition(".")[0]
        if head in module.imports and head in module.classes and resolve_fqn(tree, name) is None:
            name = f"{module.name}.{dotted}"  # a `try: import / except ImportError:` fallback
        if name not in IGNORED_BASES and dotted not in IGNORED_BASES:
            out.append(name)
    return out


@dataclass
class Resolver:
    """MROs of a tree's classes, computed once each."""

    tree: SourceTree
    _mros: dict[str, Mro] = field(default_factory=dict)

    def mro(self, info: ClassInfo) -> Mro:
        return self._mro(info, ())

    def _mro(self, info: ClassInfo, visiting: tuple[str, ...]) -> Mro:
        if info.fqn in self._mros:
            return self._mros[info.fqn]
        if info.fqn in visiting:
            return Mro((info,), problem=f"{info.fqn} is its own base (through "
                       f"{' -> '.join((*visiting, info.fqn))})")
        if len(visiting) >= MAX_MRO_DEPTH:
            return Mro((info,), problem=f"{info.fqn} inherits through more than "
                       f"{MAX_MRO_DEPTH} classes; its MRO is not computed")
        visiting = (*visiting, info.fqn)
        lines: list[list[ClassInfo]] = []
        direct: list[ClassInfo] = []
        unknown: list[str] = []
        problem: str | None = None
        for name in base_names(self.tree, info):
            base = resolve_fqn(self.tree, name)
            if base is None:
                unknown.append(name)
                continue
            if base.fqn in visiting:
                problem = f"{info.fqn} is its own base (through " \
                          f"{' -> '.join((*visiting, base.fqn))})"
                continue
            found = self._mro(base, visiting)
            unknown.extend(u for u in found.unknown if u not in unknown)
            problem = problem or found.problem
            lines.append(list(found.classes))
            direct.append(base)
        merged = _c3([*lines, direct])
        if merged is None:
            problem = problem or f"{info.fqn}: its bases cannot be ordered (C3 fails)"
            merged = list(dict.fromkeys(c for line in lines for c in line).keys())
        result = Mro((info, *merged), tuple(unknown), problem)
        self._mros[info.fqn] = result
        return result

    def find_method(self, info: ClassInfo, name: str) -> tuple[Function, ClassInfo] | None:
        """The definition of method `name` that an instance of `info` would use."""
        for owner in self.mro(info).classes:
            if name in owner.methods:
                return owner.methods[name], owner
        return None

    def has_attribute(self, info: ClassInfo, name: str) -> bool:
        """Whether some class of the MRO binds `name` other than as a method."""
        return any(name in owner.attributes for owner in self.mro(info).classes)


def _c3(sequences: list[list[ClassInfo]]) -> list[ClassInfo] | None:
    """C3 merge; None when no consistent order exists."""
    pending = [list(s) for s in sequences if s]
    out: list[ClassInfo] = []
    while pending:
        for seq in pending:
            head = seq[0]
            if not any(head in other[1:] for other in pending):
                break
        else:
            return None
        out.append(head)
        pending = [[c for c in seq if c is not head] for seq in pending]
        pending = [s for s in pending if s]
    return out
