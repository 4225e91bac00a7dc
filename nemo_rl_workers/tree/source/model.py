"""The model of a source tree that one pass builds: modules, classes, functions, calls.

Plain data, filled by `nemo_rl_workers.tree.source.build` and read by every rule; nothing here
parses. A function keeps its `ast` node and the local assignments and guards seen
while it was walked, so rules that need more than the summary read the same tree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar, cast

from nemo_rl_workers.tree.source.reading import SourceProblem

_T = TypeVar("_T")

ParamKind: TypeAlias = Literal[
    "positional-only", "positional", "var-positional", "keyword-only", "var-keyword"
]
StubKind: TypeAlias = Literal["raise NotImplementedError", "pass", "...", "docstring only"]


@dataclass(frozen=True)
class Param:
    """One parameter as written: its kind, whether it has a default, its annotation text."""

    name: str
    kind: ParamKind
    has_default: bool
    annotation: str | None = None


@dataclass(frozen=True)
class Guard:
    """A condition the code below it runs under: `test` is truthy exactly when `holds`."""

    test: ast.expr
    holds: bool


@dataclass(frozen=True)
class Assignment:
    """`name = value` inside a function, with the guards the assignment runs under."""

    name: str
    value: ast.expr
    guards: tuple[Guard, ...]
    line: int


@dataclass(eq=False)  # identity: the same definition, not an equal-looking one
class Function:
    """A function or method: its signature, kind and body shape."""

    name: str
    qualname: str  # within its module, e.g. "Policy.train"
    module: str
    file: str
    line: int
    params: tuple[Param, ...]
    is_async: bool
    decorators: tuple[str, ...]
    stub: StubKind | None
    node: ast.FunctionDef | ast.AsyncFunctionDef
    is_generator: bool = False  # a `yield` in its own body (async def + yield: async generator)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    # Local names whose value the body iterates (`for`, `async for`) or passes to next/anext.
    iterated: set[str] = field(default_factory=set)
    # `d["key"] = value` in its body, by key (with the guards each runs under).
    item_assignments: dict[str, list[Assignment]] = field(default_factory=dict)

    @property
    def is_async_generator(self) -> bool:
        return self.is_async and self.is_generator

    @property
    def is_static(self) -> bool:
        return any(d.split("(")[0].endswith("staticmethod") for d in self.decorators)

    @property
    def is_abstract(self) -> bool:
        return any(d.split("(")[0].endswith("abstractmethod") for d in self.decorators)

    def bound_params(self) -> tuple[Param, ...]:
        """The parameters a caller gives a method (`self`/`cls` dropped)."""
        if self.is_static or not self.params or self.params[0].kind not in (
            "positional-only", "positional"
        ):
            return self.params
        return self.params[1:]

    @property
    def takes_var_keyword(self) -> bool:
        return any(p.kind == "var-keyword" for p in self.params)

    @property
    def takes_var_positional(self) -> bool:
        return any(p.kind == "var-positional" for p in self.params)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(eq=False)
class ClassInfo:
    """A class statement: its bases as written and as resolved, its methods."""

    name: str
    qualname: str
    module: str
    file: str
    line: int
    bases: tuple[str, ...]  # as written (`ast.unparse`)
    node: ast.ClassDef
    decorators: tuple[str, ...] = ()
    methods: dict[str, Function] = field(default_factory=dict)
    attributes: set[str] = field(default_factory=set)  # other names bound in the body

    @property
    def fqn(self) -> str:
        return f"{self.module}.{self.qualname}"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class CallSite:
    """One call expression, where it is, and what surrounds it."""

    node: ast.Call
    module: str
    file: str
    line: int
    cls: str | None  # qualname of the enclosing class, if any
    function: str | None  # qualname of the enclosing function, if any
    guards: tuple[Guard, ...] = ()
    assigned_to: str | None = None  # `name = <call>` / `name = await <call>`
    iterated: bool = False  # `for ... in <call>` / `async for ... in <call>`

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def callee(self) -> str:
        """The called expression as written, e.g. "self.worker_group.shutdown" (computed
        when asked: most calls of a tree are never looked at by name)."""
        return ast.unparse(self.node.func)

    @property
    def args(self) -> list[ast.expr]:
        return list(self.node.args)

    def keyword(self, name: str) -> ast.expr | None:
        return next((k.value for k in self.node.keywords if k.arg == name), None)


@dataclass(frozen=True)
class ImportStatement:
    """An import the module runs whenever it is imported (a statement of its own body,
    not inside `try`, `if` or a function): `from <source> import <names>`, or `import
    <source>` (no names)."""

    source: str  # absolute (relative imports resolved)
    names: tuple[str, ...]
    line: int


@dataclass
class Module:
    """One file: its dotted name, what its names are bound to, what it defines."""

    name: str
    file: str
    is_package: bool
    # Local name -> the absolute dotted name it was imported as (module or module.attr),
    # from every import at module level (inside `try`, `if TYPE_CHECKING` too).
    imports: dict[str, str] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)  # top-level, by name
    functions: dict[str, Function] = field(default_factory=dict)  # top-level, by name
    assignments: dict[str, ast.expr] = field(default_factory=dict)  # module-level `X = ...`
    # Every name any statement at module level binds (assignments of every form, loops,
    # `with`, imports, definitions, `global` in its functions), and whether more may be
    # bound than the source shows (`from x import *`, a module `__getattr__`).
    bound: frozenset[str] = frozenset()
    open_names: bool = False
    imports_run: tuple[ImportStatement, ...] = ()
    # `X["key"] = value` at module level or in a function of the module, by X (each
    # Assignment's name is the key): how a package or a script adds to a dict another
    # module defines (an actor-environment registry).
    item_assignments: dict[str, list[Assignment]] = field(default_factory=dict)


@dataclass
class Mro:
    """A class's method resolution order from source, as far as the tree and stubs tell."""

    classes: tuple[ClassInfo, ...]
    unknown: tuple[str, ...] = ()  # bases that neither the tree nor the stubs define
    problem: str | None = None  # a cycle, or an order C3 cannot linearize


@dataclass
class SourceTree:
    """Everything one pass learned about a tree (and the stub trees read with it)."""

    roots: tuple[str, ...]
    modules: dict[str, Module] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)  # by FQN
    calls: list[CallSite] = field(default_factory=list)
    # Every function, nested ones too, by (module, qualname).
    functions: dict[tuple[str, str], Function] = field(default_factory=dict)
    problems: list[SourceProblem] = field(default_factory=list)
    files_read: int = 0
    # Modules read but not yet modelled (read_tree's `eager` said not yet): name -> (file,
    # text); `module(name)` models one the first time something asks for it.
    pending: dict[str, tuple[str, str]] = field(default_factory=dict)
    # How a pending module is modelled: set by the builder that filled `pending` (the model
    # stays below the builder, never importing it).
    modeller: Callable[[SourceTree, Path, str, str], None] | None = None
    # Names already resolved (`tree.source.resolve`), each with the model's extent when it
    # was: a walk resolves the same calls for every config it judges.
    resolved: dict[tuple[str, str], tuple[tuple[int, int, int], object]] = field(
        default_factory=dict, repr=False, compare=False)

    def module(self, name: str) -> Module | None:
        """The module `name`, modelling it now if it was left pending."""
        found = self.modules.get(name)
        if found is None and name in self.pending and self.modeller is not None:
            file, text = self.pending.pop(name)
            self.modeller(self, Path(file), name, text)
            found = self.modules.get(name)
        return found

    def remembered(self, key: tuple[str, str], make: Callable[[], _T]) -> _T:
        """`make()`, once while the model holds the same modules and classes (modelling a
        pending module, or one on demand, may change what a name resolves to)."""
        found = self.resolved.get(key)
        if found is not None and found[0] == self._extent():
            return cast(_T, found[1])  # stored by this key's maker
        answer = make()
        self.resolved[key] = (self._extent(), answer)
        return answer

    def _extent(self) -> tuple[int, int, int]:
        return len(self.modules), len(self.pending), len(self.classes)

    def function_of(self, call: CallSite) -> Function | None:
        """The function a call is written in, None at module or class level."""
        if call.function is None:
            return None
        return self.functions.get((call.module, call.function))
