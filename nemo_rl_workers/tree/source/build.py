"""One pass over a tree: read each file once, parse it once, fill the model.

The walk is pyflakes-like: statements in order, with the enclosing class and function
and the guards (`if` tests, and the negation of an earlier `if ...: return/raise`)
each statement runs under. Nothing of the tree is imported or executed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nemo_rl_workers.tree.source.imports import absolute_module, import_bindings
from nemo_rl_workers.tree.source.model import (
    Assignment,
    CallSite,
    ClassInfo,
    Function,
    Guard,
    ImportStatement,
    Module,
    Param,
    ParamKind,
    SourceTree,
    StubKind,
)
from nemo_rl_workers.tree.source.parse import parse_text
from nemo_rl_workers.tree.source.reading import SourceProblem, discover, read_source

MAX_NODES_PER_FILE = 2_000_000
"""A module with more syntax nodes than this is recorded as a problem, not modelled."""


def read_tree(
    root: Path, *, packages: Sequence[str] | None = None, stub_roots: Sequence[Path] = (),
    eager: Callable[[str], bool] | None = None,
) -> SourceTree:
    """The model of every module under `root` (a folder that would be on `sys.path`),
    only the top-level `packages` when given; `stub_roots` (PEP 561 stub folders, or
    folders of `.pyi` files) are read too so that bases outside the tree resolve.

    Every file is read once. With `eager`, a module whose text `eager` rejects is
    parsed only when `tree.module(name)` first asks for it (name resolution does), so a
    rule that needs a few modules in full does not pay for parsing all of them."""
    tree = SourceTree(roots=(str(root), *map(str, stub_roots)), modeller=model_module)
    # (start, the base module names are taken from, the folder nothing is followed out of):
    # the tree's own folder for its packages; an installed stub package (which may be a
    # link into another environment) is its own boundary.
    starts: list[tuple[Path, Path, Path | None]] = []
    if packages is None:
        starts.append((root, root, root))
    else:
        starts.extend((root / name, root, root) for name in packages)
    for stub in stub_roots:
        starts.append((stub, stub.parent if stub.name.endswith("-stubs") else stub, None))
    for start, base, boundary in starts:
        for path in discover(start, tree.problems, boundary=boundary):
            name = module_name(path, base)
            if name is None or ((name in tree.modules or name in tree.pending)
                                 and path.suffix == ".py"):
                continue
            _read_module(tree, path, name, eager)
    return tree


def module_name(path: Path, base: Path) -> str | None:
    """The dotted name `path` is imported as from `base` (a `-stubs` folder counts as its
    package), or None when a part is no identifier."""
    try:
        parts = list(path.relative_to(base).with_suffix("").parts)
    except ValueError:
        return None
    if parts and parts[0].endswith("-stubs"):
        parts[0] = parts[0].removesuffix("-stubs")
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _read_module(
    tree: SourceTree, path: Path, name: str, eager: Callable[[str], bool] | None
) -> None:
    text = read_source(path)
    if isinstance(text, SourceProblem):
        tree.problems.append(text)
        return
    tree.files_read += 1
    if eager is not None and not eager(text):
        tree.pending[name] = (str(path), text)
        return
    model_module(tree, path, name, text)


def model_module(tree: SourceTree, path: Path, name: str, text: str) -> None:
    """Parse one module's text and add it to the model (a problem if it cannot be)."""
    parsed = parse_text(text, path)
    if isinstance(parsed, SourceProblem):
        tree.problems.append(parsed)
        return
    module = Module(name, str(path), path.stem == "__init__")
    tree.modules[name] = module
    try:
        _Walker(tree, module).body(parsed.body, _Context())
        _bindings(module, parsed, "global" in text)
    except RecursionError:
        tree.problems.append(SourceProblem(str(path), "is nested too deeply to model"))


def _bindings(module: Module, parsed: ast.Module, has_global: bool) -> None:
    """`Module.bound`, `open_names` and `imports_run`, from the module's statements
    (`has_global`: the text spells `global`, so a function may bind a module name)."""
    bound: set[str] = set()
    open_names = False
    stack: list[ast.AST] = list(parsed.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            open_names |= node.name == "__getattr__" and node in parsed.body
            # A function's `global x` binds x here when it runs.
            if has_global:
                bound.update(name for inner in ast.walk(node) if isinstance(inner, ast.Global)
                             for name in inner.names)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    open_names = True
                else:
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    module.bound, module.open_names = frozenset(bound), open_names
    runs: list[ImportStatement] = []
    for stmt in parsed.body:
        if isinstance(stmt, ast.ImportFrom):
            source = absolute_module(module.name, module.is_package, stmt.module, stmt.level)
            if source is not None:
                runs.append(ImportStatement(source, tuple(a.name for a in stmt.names),
                                            stmt.lineno))
        elif isinstance(stmt, ast.Import):
            runs.extend(ImportStatement(alias.name, (), stmt.lineno) for alias in stmt.names)
    module.imports_run = tuple(runs)


@dataclass(frozen=True)
class _Context:
    cls: ClassInfo | None = None
    function: Function | None = None
    guards: tuple[Guard, ...] = ()
    qualname: str = ""

    def guarded(self, *more: Guard) -> _Context:
        return replace(self, guards=self.guards + more)


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _exits(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)


def _params(args: ast.arguments) -> tuple[Param, ...]:
    def text(node: ast.expr | None) -> str | None:
        return ast.unparse(node) if node is not None else None

    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    out: list[Param] = []
    for index, arg in enumerate(positional):
        kind: ParamKind = "positional-only" if index < len(args.posonlyargs) else "positional"
        out.append(Param(arg.arg, kind, index >= first_default, text(arg.annotation)))
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, "var-positional", False, text(args.vararg.annotation)))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(Param(arg.arg, "keyword-only", default is not None, text(arg.annotation)))
    if args.kwarg is not None:
        out.append(Param(args.kwarg.arg, "var-keyword", False, text(args.kwarg.annotation)))
    return tuple(out)


def stub_kind(body: Sequence[ast.stmt]) -> StubKind | None:
    """How a body that does nothing is written, or None for a real body."""
    rest = list(body)
    docstring = bool(rest) and isinstance(rest[0], ast.Expr) and isinstance(
        rest[0].value, ast.Constant) and isinstance(rest[0].value.value, str)
    if docstring:
        rest = rest[1:]
    if not rest:
        return "docstring only" if docstring else None
    if len(rest) != 1:
        return None
    only = rest[0]
    if isinstance(only, ast.Pass):
        return "pass"
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant) and (
        only.value.value is Ellipsis
    ):
        return "..."
    if isinstance(only, ast.Raise) and only.exc is not None:
        exc = only.exc.func if isinstance(only.exc, ast.Call) else only.exc
        if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
            return "raise NotImplementedError"
    return None


class _Walker:
    """Statements in order, expressions once each; see the module docstring."""

    def __init__(self, tree: SourceTree, module: Module) -> None:
        self.tree = tree
        self.module = module

    # -- statements ------------------------------------------------------------------

    def body(self, statements: Iterable[ast.stmt], ctx: _Context) -> None:
        for statement in statements:
            self.statement(statement, ctx)
            if isinstance(statement, ast.Assert):  # what follows runs only if it held
                ctx = ctx.guarded(Guard(statement.test, True))
            elif isinstance(statement, ast.If):
                # `if cond: return` -- what follows runs only when cond is false.
                if _exits(statement.body) and not _exits(statement.orelse):
                    ctx = ctx.guarded(Guard(statement.test, False))
                elif _exits(statement.orelse) and not _exits(statement.body):
                    ctx = ctx.guarded(Guard(statement.test, True))

    def statement(self, node: ast.stmt, ctx: _Context) -> None:
        if isinstance(node, ast.ClassDef):
            self.class_def(node, ctx)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function_def(node, ctx)
        elif isinstance(node, ast.If):
            self.expressions([node.test], ctx)
            self.body(node.body, ctx.guarded(Guard(node.test, True)))
            self.body(node.orelse, ctx.guarded(Guard(node.test, False)))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_(node, ctx)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expressions([node.target], ctx)
            self.iterated(node.iter, ctx)
            self.body(node.body, ctx)
            self.body(node.orelse, ctx)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(node, ctx)
        else:
            blocks: list[list[ast.stmt]] = []
            exprs: list[ast.expr] = []
            for name, value in ast.iter_fields(node):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    blocks.append(value)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.expr):
                            exprs.append(item)
                        elif isinstance(item, ast.ExceptHandler):
                            if item.type is not None:
                                exprs.append(item.type)
                            blocks.append(item.body)
                        elif isinstance(item, ast.withitem):
                            exprs.append(item.context_expr)
                        elif isinstance(item, ast.match_case):
                            blocks.append(item.body)
                elif isinstance(value, ast.expr) and name != "target":
                    exprs.append(value)
            self.expressions(exprs, ctx)
            for block in blocks:
                self.body(block, ctx)

    def class_def(self, node: ast.ClassDef, ctx: _Context) -> None:
        self.expressions([*node.bases, *node.decorator_list], ctx)
        qualname = f"{ctx.qualname}{node.name}"
        info = ClassInfo(
            node.name, qualname, self.module.name, self.module.file, node.lineno,
            tuple(ast.unparse(b) for b in node.bases), node,
            tuple(ast.unparse(d) for d in node.decorator_list),
        )
        if ctx.function is None:
            self.tree.classes.setdefault(info.fqn, info)
            if ctx.cls is None:
                self.module.classes.setdefault(node.name, info)
        self.body(node.body, _Context(cls=info, qualname=f"{qualname}."))

    def function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: _Context) -> None:
        self.expressions([*node.decorator_list], ctx)
        self.expressions([d for d in (*node.args.defaults, *node.args.kw_defaults) if d], ctx)
        function = Function(
            node.name, f"{ctx.qualname}{node.name}", self.module.name, self.module.file,
            node.lineno, _params(node.args), isinstance(node, ast.AsyncFunctionDef),
            tuple(ast.unparse(d) for d in node.decorator_list), stub_kind(node.body), node,
        )
        self.tree.functions.setdefault((self.module.name, function.qualname), function)
        if ctx.function is None:
            if ctx.cls is not None:
                # A later definition (a property setter, a redefinition) wins, as at runtime.
                ctx.cls.methods[node.name] = function
            else:
                self.module.functions[node.name] = function
        inner = _Context(cls=ctx.cls, function=function, qualname=f"{function.qualname}.")
        self.body(node.body, inner)

    def import_(self, node: ast.Import | ast.ImportFrom, ctx: _Context) -> None:
        if ctx.function is not None or ctx.cls is not None:
            return
        # The first binding of a name wins: `try: import fast / except ImportError: ...`.
        for local, target in import_bindings(node, self.module.name,
                                             self.module.is_package).items():
            self.module.imports.setdefault(local, target)

    def assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, ctx: _Context) -> None:
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if value is not None:
            self.expressions([value], ctx, assigned_to=_single_name(targets))
        for target in targets:
            if (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str) and ctx.function is not None
                    and value is not None and isinstance(node, ast.Assign)):
                # `kwargs["key"] = value`: how code fills the keyword arguments it passes on.
                ctx.function.item_assignments.setdefault(target.slice.value, []).append(
                    Assignment(target.slice.value, value, ctx.guards, node.lineno))
            if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str) and ctx.cls is None
                    and value is not None and isinstance(node, ast.Assign)):
                self.module.item_assignments.setdefault(target.value.id, []).append(
                    Assignment(target.slice.value, value, ctx.guards, node.lineno))
            if not isinstance(target, ast.Name):
                self.expressions([target], ctx)
                continue
            if value is None or isinstance(node, ast.AugAssign):
                continue
            if ctx.function is not None:
                ctx.function.assignments.setdefault(target.id, []).append(
                    Assignment(target.id, value, ctx.guards, node.lineno))
            elif ctx.cls is not None:
                ctx.cls.attributes.add(target.id)
            else:
                self.module.assignments.setdefault(target.id, value)

    # -- expressions -----------------------------------------------------------------

    def iterated(self, node: ast.expr, ctx: _Context) -> None:
        if isinstance(node, ast.Name) and ctx.function is not None:
            ctx.function.iterated.add(node.id)
        self.expressions([node], ctx, iterated=isinstance(node, (ast.Call, ast.Await)))

    def expressions(
        self, nodes: Iterable[ast.expr], ctx: _Context, *, assigned_to: str | None = None,
        iterated: bool = False,
    ) -> None:
        for top in nodes:
            direct = _call_of(top)
            for node in ast.walk(top):
                if isinstance(node, (ast.Yield, ast.YieldFrom)) and ctx.function is not None:
                    ctx.function.is_generator = True
                elif isinstance(node, ast.comprehension):
                    if isinstance(node.iter, ast.Name) and ctx.function is not None:
                        ctx.function.iterated.add(node.iter.id)
                elif isinstance(node, ast.Call):
                    self.call(node, ctx, node is direct, assigned_to, iterated)

    def call(self, node: ast.Call, ctx: _Context, direct: bool, assigned_to: str | None,
             iterated: bool) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("next", "anext") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and ctx.function is not None:
                ctx.function.iterated.add(arg.id)
        self.tree.calls.append(CallSite(
            node, self.module.name, self.module.file, node.lineno,
            ctx.cls.qualname if ctx.cls is not None else None,
            ctx.function.qualname if ctx.function is not None else None,
            ctx.guards,
            assigned_to if direct else None,
            iterated and direct,
        ))


def _single_name(targets: Sequence[ast.expr]) -> str | None:
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    return None


def _call_of(node: ast.expr) -> ast.Call | None:
    """The call an expression is, directly or awaited (`x = await f()`)."""
    if isinstance(node, ast.Await):
        node = node.value
    return node if isinstance(node, ast.Call) else None
