"""`audit --emit-protocols OUT.py`: typed Protocols for a tree's roles and modes.

One Protocol per driver and worker class it can start (its mode: the switches that
select it): the methods that driver calls by name under that mode, each with the
default worker's signature and annotations as written there. A name in an annotation
is imported from where the tree defines it (typing's and the builtins kept as they
are); one the tree does not define (torch's, Ray's) becomes `Any`, with a comment
naming it. A called method the worker does not define is left out, with a comment (it
is the driver side's `missing-method` finding). The output is a function of the tree
alone: sorted, no dates, no absolute paths; the tree is named by its git commit (else its
folder's name), never by how `--nemo-rl` was spelled.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nemo_rl_workers.checks.audit.protocols_shape import EmitError, check_emitted
from nemo_rl_workers.reading.atomic_write import write_atomic
from nemo_rl_workers.tree.conditions import conflicts, describe
from nemo_rl_workers.tree.drivers import restricted
from nemo_rl_workers.tree.git_head import head_commit
from nemo_rl_workers.tree.source import (
    ClassInfo,
    Function,
    Module,
    SourceTree,
    resolve_fqn,
    resolve_local,
)

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.context import AuditContext
    from nemo_rl_workers.checks.audit.extensions import ExtensionSection
    from nemo_rl_workers.checks.audit.rules import Finding

KEPT_MODULES = ("typing", "typing_extensions", "collections.abc", "collections", "enum",
                "pathlib", "types", "abc", "dataclasses", "contextlib")
"""Standard-library modules whose names an emitted annotation imports as they are."""
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_")) | {"None"}
SKIPPED_DECORATORS = ("staticmethod", "classmethod", "property")


@dataclass
class _Imports:
    """What the emitted module imports: name -> (module, original name)."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)

    def need(self, module: str, name: str) -> str | None:
        """The local name `module.name` is imported as; None when either is no Python name
        (a file of the tree named `a-b.py`): what cannot be imported stays `Any`."""
        if not (_is_dotted(module) and is_name(name)):
            return None
        for local, target in self.names.items():
            if target == (module, name):
                return local
        local = name
        if local in self.names:
            local = f"_{module.replace('.', '_')}_{name}"
        self.names[local] = (module, name)
        return local

    def render(self) -> str:
        by_module: dict[str, list[str]] = {}
        for local, (module, name) in self.names.items():
            by_module.setdefault(module, []).append(
                name if local == name else f"{name} as {local}")
        std = sorted(m for m in by_module if m.split(".")[0] in {k.split(".")[0]
                                                                  for k in KEPT_MODULES})
        rest = sorted(m for m in by_module if m not in std)
        lines: list[str] = []
        for group in (std, rest):
            lines.extend(f"from {m} import {', '.join(sorted(by_module[m]))}" for m in group)
            lines.append("")
        return "\n".join(lines).strip("\n") + "\n"


@dataclass
class _Annotation:
    tree: SourceTree
    imports: _Imports
    unresolved: set[str] = field(default_factory=set)

    def render(self, node: ast.expr | None, module: Module) -> str:
        if node is None:
            return "Any"
        return ast.unparse(self.expr(node, module))  # a string constant comes out as repr

    def name(self, node: ast.Name | ast.Attribute, module: Module) -> ast.expr:
        found = self._name(node, module)
        if found is None:  # not in the tree, or not importable by name
            self.unresolved.add(ast.unparse(node))
            return ast.Name("Any")
        return found

    def _imported(self, module: str, name: str) -> ast.expr | None:
        local = self.imports.need(module, name)
        return None if local is None else ast.Name(local)

    def expr(self, node: ast.expr, module: Module) -> ast.expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                self.unresolved.add(node.value)
                return ast.Name("Any")
            return self.expr(parsed, module)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.name(node, module)
        if isinstance(node, ast.Subscript):
            return ast.Subscript(self.expr(node.value, module), self.expr(node.slice, module))
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.expr(e, module) for e in node.elts])
        if isinstance(node, ast.List):
            return ast.List([self.expr(e, module) for e in node.elts])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return ast.BinOp(self.expr(node.left, module), ast.BitOr(),
                             self.expr(node.right, module))
        if isinstance(node, ast.Constant):
            return node
        self.unresolved.add(ast.unparse(node))
        return ast.Name("Any")

    def _name(self, node: ast.Name | ast.Attribute, module: Module) -> ast.expr | None:
        dotted = ast.unparse(node)
        if isinstance(node, ast.Name) and node.id in BUILTIN_NAMES and not (
            node.id in module.imports or node.id in module.classes
        ):
            return node
        absolute = resolve_local(module, dotted)
        head, _, name = absolute.rpartition(".")
        if head in KEPT_MODULES:
            return self._imported(head, name)
        if resolve_fqn(self.tree, absolute) is not None:
            info = resolve_fqn(self.tree, absolute)
            assert info is not None
            return self._imported(info.module, info.qualname.split(".")[0])
        owner = self.tree.module(head)
        if owner is not None and name in owner.assignments:  # a type alias or TypeVar
            return self._imported(owner.name, name)
        return None


def is_name(text: str) -> bool:
    """A Python identifier that is no keyword: what may stand as a name in emitted code."""
    return text.isidentifier() and not keyword.iskeyword(text)


def _is_dotted(text: str) -> bool:
    return all(is_name(part) for part in text.split("."))


def _identifier(text: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    return out if is_name(out) else f"_{out}" if is_name(f"_{out}") else "_Unnamed"


def _text(text: str) -> str:
    """`text` as it may stand in a comment or inside a triple-quoted string: a backslash, a
    double quote and anything unprintable (a newline above all) are escaped, so data from
    the tree can never end the comment or the string and become code."""
    out: list[str] = []
    for char in text:
        if char in '\\"':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        else:
            out.append(repr(char)[1:-1])
    return "".join(out)


def _signature(function: Function, module: Module, render: _Annotation) -> list[str]:
    node = function.node
    args = node.args
    parts: list[str] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        text = arg.arg if index == 0 and not function.is_static else (
            f"{arg.arg}: {render.render(arg.annotation, module)}")
        if index >= first_default:
            text += " = ..."
        parts.append(text)
        if args.posonlyargs and index == len(args.posonlyargs) - 1:
            parts.append("/")
    if args.vararg is not None:
        parts.append(f"*{args.vararg.arg}: {render.render(args.vararg.annotation, module)}")
    elif args.kwonlyargs:
        parts.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        text = f"{arg.arg}: {render.render(arg.annotation, module)}"
        parts.append(text + (" = ..." if default is not None else ""))
    if args.kwarg is not None:
        parts.append(f"**{args.kwarg.arg}: {render.render(args.kwarg.annotation, module)}")
    returns = render.render(node.returns, module)
    # An async generator is called without await: in a Protocol it is a plain `def`.
    head = "async def" if function.is_async and not function.is_generator else "def"
    lines = []
    if function.is_static:
        lines.append("@staticmethod")
    elif any(d.split("(")[0] == "classmethod" for d in function.decorators):
        lines.append("@classmethod")
    lines.append(f"{head} {function.name}({', '.join(parts)}) -> {returns}: ...")
    return lines


@dataclass(frozen=True)
class _Role:
    driver: str
    worker: ClassInfo
    condition: frozenset[tuple[str, bool]]
    methods: tuple[str, ...]


def _roles(ctx: AuditContext) -> list[_Role]:
    roles: list[_Role] = []
    for driver, (_, choices) in sorted(ctx.choices.items()):
        for choice in sorted(choices, key=lambda c: (c.fqn, describe(c.condition))):
            if choice.quantized:
                continue
            info = resolve_fqn(ctx.tree, choice.fqn)
            if info is None:
                continue
            driver_info = ctx.choices[driver][0]
            methods = sorted({
                d.method for d in ctx.side.dispatches
                if d.owner == driver
                and not conflicts(restricted(d, driver_info), choice.condition)
            })
            if methods and not any(r.driver == driver and r.worker is info for r in roles):
                roles.append(_Role(driver, info, choice.condition, tuple(methods)))
    return roles


@dataclass(frozen=True)
class Emission:
    """The emitted module's text, and the names from the tree it left out, each a line
    (a method name that is no Python identifier cannot be a member of a Protocol)."""

    text: str
    refused: tuple[str, ...]
    # (driver, default worker FQN, the Protocol's class name) of each Protocol emitted.
    roles: tuple[tuple[str, str, str], ...] = ()


def protocols_source(ctx: AuditContext) -> str:
    return emission(ctx).text


def emission(ctx: AuditContext) -> Emission:
    """The tree's Protocols. Code is written only from names that are Python identifiers;
    every other piece of data from the tree (docstrings, comments) goes through `_text`,
    annotations through `ast.unparse`, and the result is parsed back (`check_emitted`)."""
    imports = _Imports()
    imports.need("typing", "Any")
    imports.need("typing", "Protocol")
    roles = _roles(ctx)
    names: dict[str, int] = {}
    for role in roles:
        names[role.worker.name] = names.get(role.worker.name, 0) + 1
    bodies: list[str] = []
    refused: list[str] = []
    emitted: list[tuple[str, str, str]] = []
    for role in roles:
        stem = role.worker.name if names[role.worker.name] == 1 else (
            f"{role.driver}{role.worker.name}")
        cls_name = _identifier(f"{stem}Protocol")
        emitted.append((role.driver, role.worker.fqn, cls_name))
        when = describe(role.condition) or "always"
        where = _relative(role.worker.where, ctx.root)
        lines = [
            f"class {cls_name}(Protocol):",
            f'    """What {_text(role.driver)} calls by name on its workers ({_text(when)}); '
            "default worker",
            f"    {_text(role.worker.fqn)} ({_text(where)}).",
            '    """',
            "",
        ]
        for method in role.methods:
            if not is_name(method):
                refused.append(f"--emit-protocols: left out {method!r}, which "
                               f"{role.driver} calls by name: not a Python identifier")
                continue
            found = ctx.resolver.find_method(role.worker, method)
            if found is None:
                lines.append(f"    # {method}: called by {_text(role.driver)}, not defined by "
                             f"{_text(role.worker.name)}")
                continue
            function, owner = found
            module = ctx.tree.module(owner.module)
            if module is None:
                continue
            if any(d.split("(")[0] == "property" for d in function.decorators):
                lines.append(f"    # {method}: a property of {_text(owner.name)}, not a method")
                continue
            render = _Annotation(ctx.tree, imports)
            signature = _signature(function, module, render)
            if render.unresolved:
                unresolved = ", ".join(sorted(render.unresolved))
                lines.append(f"    # {method}: Any stands for {_text(unresolved)} "
                             "(not in the tree)")
            lines.extend(f"    {line}" for line in signature)
        bodies.append("\n".join(lines) + "\n")
    header = (
        '"""Typed Protocols for the worker calls of the NeMo-RL tree '
        f"{_text(tree_name(ctx.root))}.\n\n"
        "Generated by `nemo-rl-workers audit --emit-protocols`; do not edit. One Protocol per\n"
        "driver and worker mode: the methods the driver calls by name in that mode, with the\n"
        'default worker\'s signatures and annotations as written.\n"""\n\n'
        "from __future__ import annotations\n\n"
    )
    text = header + imports.render() + "\n\n" + "\n\n".join(bodies)
    check_emitted(text)
    return Emission(text, tuple(refused), tuple(emitted))


def tree_name(root: Path) -> str:
    """What names the tree in the emitted docstring: only what is stable for everyone who
    emits it, never how `--nemo-rl` was spelled: the git commit it is at, else the name of
    its folder."""
    commit = head_commit(root)
    if commit is not None:
        return f"at commit {commit}"
    try:
        resolved = root.resolve()
    except (OSError, RuntimeError):
        resolved = root.absolute()
    return resolved.name or str(resolved)


def _relative(where: str, root: Path) -> str:
    file, _, line = where.rpartition(":")
    try:
        return f"{os.path.relpath(file, root)}:{line}"
    except ValueError:
        return where


def write_protocols(path: Path, text: str) -> None:
    """Replace `path` with `text` through the one atomic writer (a symlink is written
    through to the file it names, never out of the folder it lies in)."""
    try:
        write_atomic(path, text.encode("utf-8"))
    except OSError as err:
        raise EmitError(f"--emit-protocols {path}: cannot be written: {err.strerror or err}") \
            from err


def emit_protocols(
    extend: Callable[[AuditContext], tuple[list[Finding], ExtensionSection]],
    path: Path,
    emitted: list[str],
) -> Callable[[AuditContext], tuple[list[Finding], ExtensionSection]]:
    """`extend`, followed by writing the tree's Protocols to `path` (one line in `emitted`)."""

    def both(ctx: AuditContext) -> tuple[list[Finding], ExtensionSection]:
        result = extend(ctx)
        emitted_module = emission(ctx)
        write_protocols(path, emitted_module.text)
        emitted.extend(emitted_module.refused)
        count = sum(line.startswith("class ") for line in emitted_module.text.splitlines())
        emitted.append(f"wrote {count} Protocols to {path}")
        return result

    return both
