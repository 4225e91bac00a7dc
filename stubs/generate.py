"""Regenerate the vLLM stubs and their manifest from a vLLM wheel, without importing vLLM.

    pip download vllm==0.33.0 --no-deps -d /tmp/vllm-wheel
    python stubs/generate.py /tmp/vllm-wheel/vllm-0.33.0-*.whl

The wheel is read as a zip and its sources parsed with `ast`: vLLM needs a CUDA torch
and a GPU to import, and a stub must describe the release, not whatever happens to be
installed. Written, under stubs/vllm/: the modules in `GENERATED` and one module per
upstream module that defines a class their annotations name (an *opaque* class: the
name exists and accepts anything, its members are not described), plus
stubs/manifest.json (every generated name with its kind, type and default).
`tests/stubs/test_vllm_stubs.py` compares the committed stubs with the manifest.

The manifest also records vLLM's `worker_extension_cls` rule (`extension_rule`): the
worker class each platform mixes the extension into, and every attribute name that
class has through its MRO inside vLLM, which is what vLLM's clash assertion checks.
A copy ships in the installed `vllm-stubs` (`vllm-stubs/manifest.json`), so the
rule can be applied against whichever stubs version is installed.

Annotations are rendered as upstream writes them, with vLLM's own type aliases
inlined (`ModelDType` becomes its `Literal[...]`) and names from other third-party
packages (torch, transformers, ...) as `Any`, since a stub cannot require them.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "vllm"
MANIFEST = HERE / "manifest.json"
# The copy the installed distribution carries (package data of `vllm-stubs`).
PACKAGED_MANIFEST = PACKAGE / "manifest.json"

# Stdlib modules whose names a stub may import as they are.
STDLIB_TYPING = {"typing", "typing_extensions", "collections.abc", "pathlib", "types", "enum"}
# typing names that are spelled differently in a stub (PEP 604 unions, builtins).
TYPING_ALIASES = {"List": "list", "Dict": "dict", "Set": "set", "Tuple": "tuple", "Type": "type"}


@dataclass(frozen=True)
class ClassSpec:
    """One class to describe: its constructor and/or the attributes the code reads."""

    module: str
    name: str
    # "dataclass": fields in order, positional-or-keyword; "kwonly": fields keyword-only
    # (msgspec structs, deliberately stricter, see stubs/README.md); "signature": copy
    # `__init__`, expanding `**kwargs` into the fields of `kwargs_into`; "attributes":
    # only `attributes`, typed from class annotations or `__init__` parameters.
    init: str
    attributes: tuple[str, ...] = ()
    kwargs_into: str | None = None
    base: str | None = None
    # Members written by hand (methods of the surface the code calls), after the fields.
    extra: str = ""


_LLM_METHODS = '''
    # Methods: hand-written, the surface NeMo-RL calls (see stubs/README.md).
    def generate(
        self,
        prompts: Sequence[TokensPrompt],
        sampling_params: SamplingParams | None = None,
        *,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]: ...
    def collective_rpc(
        self,
        method: str,
        timeout: float | None = None,
        args: tuple[object, ...] = (),
        kwargs: dict[str, object] | None = None,
    ) -> list[object]: ...
    def sleep(self, level: int = 1) -> None: ...
    def wake_up(self, tags: list[str] | None = None) -> None: ...
'''

_LLM_IMPORTS = {
    "collections.abc": {"Sequence"},
    "vllm.inputs": {"TokensPrompt"},
    "vllm.outputs": {"RequestOutput"},
    "vllm.sampling_params": {"SamplingParams"},
}

# Module -> the classes it describes, in order.
GENERATED: dict[str, tuple[ClassSpec, ...]] = {
    "vllm.engine.arg_utils": (
        ClassSpec("vllm.engine.arg_utils", "EngineArgs", "dataclass"),
        ClassSpec(
            "vllm.engine.arg_utils",
            "AsyncEngineArgs",
            "dataclass",
            base="vllm.engine.arg_utils.EngineArgs",
        ),
    ),
    "vllm.entrypoints.llm": (
        ClassSpec(
            "vllm.entrypoints.llm",
            "LLM",
            "signature",
            kwargs_into="vllm.engine.arg_utils.EngineArgs",
            extra=_LLM_METHODS,
        ),
    ),
    "vllm.sampling_params": (ClassSpec("vllm.sampling_params", "SamplingParams", "kwonly"),),
    "vllm.outputs": (
        ClassSpec(
            "vllm.outputs",
            "CompletionOutput",
            "attributes",
            ("index", "text", "token_ids", "cumulative_logprob", "logprobs", "finish_reason"),
        ),
        ClassSpec(
            "vllm.outputs",
            "RequestOutput",
            "attributes",
            ("request_id", "prompt", "prompt_token_ids", "outputs", "finished"),
        ),
    ),
    "vllm.logprobs": (ClassSpec("vllm.logprobs", "Logprob", "dataclass"),),
}
EXTRA_IMPORTS = {"vllm.entrypoints.llm": _LLM_IMPORTS}
# Hand-written modules the generator never touches.
HAND_WRITTEN = (
    "vllm/__init__.pyi",
    "vllm/inputs.pyi",
    "vllm/engine/__init__.pyi",
    "vllm/engine/async_llm_engine.pyi",
    "vllm/entrypoints/__init__.pyi",
)


class Source:
    """The wheel's Python sources by module name, parsed on demand."""

    def __init__(self, wheel: Path) -> None:
        self.zip = zipfile.ZipFile(wheel)
        self.names = set(self.zip.namelist())
        self._trees: dict[str, ast.Module] = {}
        self.version = self._version(wheel)

    def _version(self, wheel: Path) -> str:
        parts = wheel.name.split("-")
        return parts[1] if len(parts) > 1 else "unknown"

    def path(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in self.names:
                return candidate
        return None

    def is_package(self, module: str) -> bool:
        return f"{module.replace('.', '/')}/__init__.py" in self.names

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = self.path(module)
            if path is None:
                return None
            self._trees[module] = ast.parse(self.zip.read(path).decode("utf-8"), path)
        return self._trees[module]


def top_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module statements, including those under `if` (TYPE_CHECKING) and `try`."""
    for stmt in tree.body:
        if isinstance(stmt, ast.If):
            yield from stmt.body
            yield from stmt.orelse
        elif isinstance(stmt, ast.Try):
            yield from stmt.body
        else:
            yield stmt


@dataclass(frozen=True)
class Found:
    """What a name is bound to: a class, a type alias, a constant, or an import."""

    kind: str  # "class", "alias", "module", "external", "stdlib", "unknown"
    module: str
    name: str
    node: ast.AST | None = None


class Resolver:
    """Follows names through vLLM's imports to where they are defined."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def absolute(self, module: str, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        package = module if self.source.is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{node.module}" if node.module else package

    def find(self, module: str, name: str, depth: int = 0) -> Found:
        if module.split(".")[0] != "vllm":
            kind = "stdlib" if module in STDLIB_TYPING else "external"
            return Found(kind, module, name)
        tree = self.source.tree(module)
        if tree is None or depth > 20:
            if self.source.path(f"{module}.{name}") is not None:
                return Found("module", f"{module}.{name}", name)
            return Found("unknown", module, name)
        for stmt in top_level(tree):
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                return Found("class", module, name, stmt)
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            ):
                return Found("alias", module, name, stmt.value)
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == name
                and stmt.value is not None
            ):
                return Found("alias", module, name, stmt.value)
            # `type X = ...` (Python 3.12+); ast.TypeAlias is absent on 3.11.
            if type(stmt).__name__ == "TypeAlias" and getattr(stmt, "name", None) == name:
                return Found("alias", module, name, getattr(stmt, "value", None))
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name:
                        origin = self.absolute(module, stmt)
                        if self.source.path(f"{origin}.{alias.name}") is not None:
                            return Found("module", f"{origin}.{alias.name}", alias.name)
                        return self.find(origin, alias.name, depth + 1)
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname == name or (alias.asname is None and alias.name == name):
                        return Found("module", alias.name, name)
        if self.source.path(f"{module}.{name}") is not None:
            return Found("module", f"{module}.{name}", name)
        return Found("unknown", module, name)


@dataclass
class Renderer:
    """Renders annotations for a stub module, collecting what it must import."""

    resolver: Resolver
    imports: dict[str, set[str]] = field(default_factory=dict)
    opaque: dict[str, dict[str, ast.ClassDef]] = field(default_factory=dict)
    # Names that could not be followed, rendered as Any (reported by the generator).
    unknown: set[str] = field(default_factory=set)
    stub_module: str = ""

    def need(self, module: str, name: str) -> str:
        if module != self.stub_module:
            self.imports.setdefault(module, set()).add(name)
        return name

    def annotation(self, node: ast.expr | None, module: str) -> str:
        if node is None:
            return self.need("typing", "Any")
        return ast.unparse(_BareGenerics(self).visit(self.expr(node, module)))

    def expr(self, node: ast.expr, module: str) -> ast.expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return node
            return self.expr(parsed, module)
        if isinstance(node, ast.Name):
            return self.name(node.id, module)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found = self.resolver.find(module, node.value.id)
            if found.kind == "module":
                return self.resolved(self.resolver.find(found.module, node.attr), node.attr)
            if found.kind in ("stdlib",):
                self.need("typing", "Any")
                return ast.Name("Any")
            self.unknown.add(ast.unparse(node))
            return ast.Name(self.need("typing", "Any"))
        if isinstance(node, ast.Subscript):
            if ast.unparse(node.value).split(".")[-1] == "Annotated":
                # Annotated[T, metadata]: the metadata is for pydantic, the type is T.
                first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
                return self.expr(first, module)
            head = self.expr(node.value, module)
            if isinstance(head, ast.Name) and head.id == "Literal":
                return ast.Subscript(head, self.literal(node.slice, module))
            if isinstance(head, ast.Name) and head.id == "Optional":
                return ast.BinOp(self.expr(node.slice, module), ast.BitOr(), ast.Constant(None))
            if isinstance(head, ast.Name) and head.id == "Union":
                parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                return self.union([self.expr(p, module) for p in parts])
            return ast.Subscript(head, self.expr(node.slice, module))
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.expr(e, module) for e in node.elts])
        if isinstance(node, ast.List):
            return ast.List([self.expr(e, module) for e in node.elts])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.expr(node.left, module), self.expr(node.right, module)
            return ast.BinOp(left, ast.BitOr(), right)
        if isinstance(node, ast.Constant):
            return node
        self.unknown.add(ast.unparse(node))
        return ast.Name(self.need("typing", "Any"))

    def literal(self, node: ast.expr, module: str) -> ast.expr:
        """Literal[...] arguments: constants, or names of other Literal aliases (inlined)."""
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list[ast.expr] = []
        for part in parts:
            if isinstance(part, ast.Constant):
                out.append(part)
                continue
            rendered = self.expr(part, module)
            if isinstance(rendered, ast.Subscript):
                inner = rendered.slice
                out.extend(inner.elts if isinstance(inner, ast.Tuple) else [inner])
            else:
                self.unknown.add(ast.unparse(part))
        return ast.Tuple(out) if len(out) != 1 else out[0]

    def union(self, parts: list[ast.expr]) -> ast.expr:
        result = parts[0]
        for part in parts[1:]:
            result = ast.BinOp(result, ast.BitOr(), part)
        return result

    def name(self, name: str, module: str) -> ast.expr:
        if hasattr(builtins, name) or name == "None":
            return ast.Name(name)
        return self.resolved(self.resolver.find(module, name), name)

    def resolved(self, found: Found, name: str) -> ast.expr:
        if found.kind == "stdlib":
            real = TYPING_ALIASES.get(found.name, found.name)
            if real != found.name:
                return ast.Name(real)
            return ast.Name(self.need(found.module, found.name))
        if found.kind == "alias" and isinstance(found.node, ast.expr):
            if _is_type_var(found.node):
                return ast.Name(self.need("typing", "Any"))
            return self.expr(found.node, found.module)
        if found.kind == "class" and isinstance(found.node, ast.ClassDef):
            self.opaque.setdefault(found.module, {})[found.name] = found.node
            return ast.Name(self.need(found.module, found.name))
        if found.kind != "external":
            self.unknown.add(f"{found.module}.{found.name}")
        return ast.Name(self.need("typing", "Any"))


# Builtin generics and how many type arguments they take when written bare.
_GENERIC_ARITY = {"dict": 2, "list": 1, "set": 1, "frozenset": 1, "type": 1, "tuple": 0}


class _BareGenerics(ast.NodeTransformer):
    """`dict` written bare upstream is `dict[Any, Any]`: what it means, spelled out."""

    def __init__(self, render: Renderer) -> None:
        self.render = render

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.slice = self.visit(node.slice)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        arity = _GENERIC_ARITY.get(node.id)
        if arity is None:
            return node
        any_ = ast.Name(self.render.need("typing", "Any"))
        if arity == 0:
            return ast.Subscript(node, ast.Tuple([any_, ast.Constant(Ellipsis)]))
        args: ast.expr = any_ if arity == 1 else ast.Tuple([any_] * arity)
        return ast.Subscript(node, args)


def _is_type_var(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) in ("TypeVar", "typing.TypeVar")


# ---------------------------------------------------------------------------------------
# Defaults


@dataclass(frozen=True)
class Default:
    """A parameter default: a JSON-able literal, or the upstream expression (stub `...`)."""

    literal: bool
    value: Any  # the literal, or the source text

    def stub(self) -> str:
        if self.literal and (not isinstance(self.value, str) or len(self.value) <= 50):
            return repr(self.value)
        return "..."

    def manifest(self) -> Any:
        return self.value if self.literal else {"expr": self.value}


class Defaults:
    """Follows `ModelConfig.model` and `get_field(ModelConfig, "model")` to the literal."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver

    def of(self, node: ast.expr, module: str, depth: int = 0) -> Default:
        text = ast.unparse(node)
        if depth > 10:
            return Default(False, text)
        try:
            value = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError):
            pass
        else:
            if isinstance(value, (str, int, float, bool, type(None))):
                return Default(True, value)
            return Default(False, text)
        if isinstance(node, ast.Name):
            constant = self.resolver.find(module, node.id)
            if constant.kind == "alias" and isinstance(constant.node, ast.expr):
                return self.of(constant.node, constant.module, depth + 1)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = self.resolver.find(module, node.value.id)
            if owner.kind == "class" and isinstance(owner.node, ast.ClassDef):
                found = self.field(owner, node.attr, depth)
                if found is not None:
                    return found
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if func.endswith("get_field") and len(node.args) == 2:
                owner_node, name_node = node.args
                if isinstance(owner_node, ast.Name) and isinstance(name_node, ast.Constant):
                    owner = self.resolver.find(module, owner_node.id)
                    if owner.kind == "class":
                        found = self.field(owner, str(name_node.value), depth)
                        if found is not None:
                            return found
            if func.split(".")[-1] in ("field", "Field"):
                for kw in node.keywords:
                    if kw.arg == "default":
                        return self.of(kw.value, module, depth + 1)
        return Default(False, text)

    def field(self, owner: Found, name: str, depth: int) -> Default | None:
        assert isinstance(owner.node, ast.ClassDef)
        for stmt in owner.node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == name
                and stmt.value is not None
            ):
                return self.of(stmt.value, owner.module, depth + 1)
        return None


# ---------------------------------------------------------------------------------------
# Classes


@dataclass
class Param:
    name: str
    kind: str  # "positional-or-keyword", "keyword-only"
    type: str
    default: Default | None
    # Upstream's annotation when it does not admit its own default None (`int = None`):
    # the stub's type adds `| None`, since passing the default is always accepted.
    upstream_type: str | None = None

    def __post_init__(self) -> None:
        default = self.default
        if default is not None and default.literal and default.value is None:
            parts = {p.strip() for p in self.type.split("|")}
            if "None" not in parts and "Any" not in parts:
                self.upstream_type = self.type
                self.type = f"{self.type} | None"

    def stub(self) -> str:
        default = "" if self.default is None else f" = {self.default.stub()}"
        return f"{self.name}: {self.type}{default}"

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "type": self.type}
        if self.upstream_type is not None:
            out["upstream_type"] = self.upstream_type
        if self.default is not None:
            out["default"] = self.default.manifest()
        return out


@dataclass
class Described:
    spec: ClassSpec
    params: list[Param]
    attributes: list[tuple[str, str]]  # (name, type)
    doc: str


class Describer:
    def __init__(self, source: Source, resolver: Resolver) -> None:
        self.source = source
        self.resolver = resolver
        self.defaults = Defaults(resolver)

    def class_node(self, module: str, name: str) -> ast.ClassDef:
        found = self.resolver.find(module, name)
        if found.kind != "class" or not isinstance(found.node, ast.ClassDef):
            raise SystemExit(f"generate: {module}.{name} is not a class in this vLLM")
        return found.node

    def fields(self, module: str, name: str, render: Renderer, kind: str) -> list[Param]:
        """Dataclass / struct fields, base classes' first (as the constructor orders them)."""
        node = self.class_node(module, name)
        params: list[Param] = []
        for base in node.bases:
            if isinstance(base, ast.Name):
                found = self.resolver.find(module, base.id)
                if found.kind == "class" and _is_dataclass(found.node):
                    params.extend(self.fields(found.module, found.name, render, kind))
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            field_name = stmt.target.id
            annotation = ast.unparse(stmt.annotation)
            if "ClassVar" in annotation or field_name.startswith("_") or _init_false(stmt):
                continue
            default = None if stmt.value is None else self.defaults.of(stmt.value, module)
            params = [p for p in params if p.name != field_name]
            params.append(
                Param(field_name, kind, render.annotation(stmt.annotation, module), default)
            )
        return params

    def signature(self, spec: ClassSpec, render: Renderer) -> list[Param]:
        node = self.class_node(spec.module, spec.name)
        init = next(
            s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"
        )
        args = init.args
        params: list[Param] = []
        positional = args.posonlyargs + args.args
        pos_defaults: list[ast.expr | None] = [None] * (
            len(positional) - len(args.defaults)
        ) + list(args.defaults)
        for arg, default in zip(positional[1:], pos_defaults[1:], strict=True):
            params.append(self.param(arg, "positional-or-keyword", default, spec.module, render))
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            params.append(self.param(arg, "keyword-only", kw_default, spec.module, render))
        if args.kwarg is not None and spec.kwargs_into is not None:
            into_module, _, into_name = spec.kwargs_into.rpartition(".")
            named = {p.name for p in params}
            for forwarded in self.fields(into_module, into_name, render, "keyword-only"):
                if forwarded.name not in named:
                    params.append(forwarded)
        return params

    def param(
        self, arg: ast.arg, kind: str, default: ast.expr | None, module: str, render: Renderer
    ) -> Param:
        value = None if default is None else self.defaults.of(default, module)
        return Param(arg.arg, kind, render.annotation(arg.annotation, module), value)

    def attributes(self, spec: ClassSpec, render: Renderer) -> list[tuple[str, str]]:
        node = self.class_node(spec.module, spec.name)
        found: dict[str, ast.expr] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                found[stmt.target.id] = stmt.annotation
            if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
                for arg in stmt.args.args + stmt.args.kwonlyargs:
                    if arg.annotation is not None:
                        found.setdefault(arg.arg, arg.annotation)
        out = []
        for name in spec.attributes:
            if name not in found:
                raise SystemExit(f"generate: {spec.module}.{spec.name} has no attribute {name}")
            out.append((name, render.annotation(found[name], spec.module)))
        return out

    def describe(self, spec: ClassSpec, render: Renderer) -> Described:
        node = self.class_node(spec.module, spec.name)
        doc = (ast.get_docstring(node) or spec.name).strip().splitlines()[0]
        if spec.init == "signature":
            return Described(spec, self.signature(spec, render), [], doc)
        if spec.init == "attributes":
            return Described(spec, [], self.attributes(spec, render), doc)
        kind = "keyword-only" if spec.init == "kwonly" else "positional-or-keyword"
        params = self.fields(spec.module, spec.name, render, kind)
        if spec.base is not None:
            base_module, _, base_name = spec.base.rpartition(".")
            inherited = {p.name for p in self.fields(base_module, base_name, render, kind)}
            attributes = [(p.name, p.type) for p in params if p.name not in inherited]
        else:
            attributes = [(p.name, p.type) for p in params]
        return Described(spec, params, attributes, doc)


def _is_dataclass(node: ast.AST | None) -> bool:
    return isinstance(node, ast.ClassDef) and any(
        "dataclass" in ast.unparse(d) for d in node.decorator_list
    )


def _init_false(stmt: ast.AnnAssign) -> bool:
    value = stmt.value
    return isinstance(value, ast.Call) and any(
        kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False
        for kw in value.keywords
    )


# ---------------------------------------------------------------------------------------
# vLLM's worker_extension_cls rule

# vLLM mixes the extension into its worker class in WorkerWrapperBase.init_worker; each
# platform's check_and_update_config picks that class when `worker_cls` is "auto".
RULE_MODULE = "vllm.v1.worker.worker_base"
RULE_FUNCTION = ("WorkerWrapperBase", "init_worker")
PLATFORMS = ("cuda", "rocm", "cpu", "xpu")
_PROPERTY_DECORATORS = {"property", "cached_property", "functools.cached_property"}


def _method(tree: ast.Module, owner: str, name: str) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == owner:
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    return None


def rule_site(source: Source) -> dict[str, Any]:
    """Where and how vLLM checks an extension: the `for attr in dir(ext)` loop, the name
    prefix it skips, and the `assert not hasattr(worker_class, attr)` it makes.

    Read from the source so that a release that changes the rule stops the generator
    instead of recording a rule vLLM no longer applies."""
    path = source.path(RULE_MODULE)
    tree = source.tree(RULE_MODULE)
    function = None if tree is None else _method(tree, *RULE_FUNCTION)
    loop = skip = check = None
    for node in ast.walk(function) if function is not None else ():
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and ast.unparse(node.iter.func) == "dir"
        ):
            loop = node
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.If)
                    and isinstance(inner.test, ast.Call)
                    and ast.unparse(inner.test.func).endswith(".startswith")
                    and isinstance(inner.test.args[0], ast.Constant)
                ):
                    skip = inner.test.args[0].value
                if isinstance(inner, ast.Assert) and ast.unparse(inner.test).startswith(
                    "not hasattr("
                ):
                    check = inner
    if loop is None or not isinstance(skip, str) or check is None or path is None:
        raise SystemExit(
            f"generate: {RULE_MODULE}.{'.'.join(RULE_FUNCTION)} no longer checks extensions "
            "with `for attr in dir(ext)` / `assert not hasattr(worker_class, attr)`; read "
            "vLLM's rule again and update extension_rule in stubs/generate.py"
        )
    return {
        "file": path,
        "function": ".".join(RULE_FUNCTION),
        "line": check.lineno,
        "names": "dir(worker_extension_cls)",
        "skip_prefix": skip,
        "check": ast.unparse(check.test),
    }


def platform_worker(source: Source, platform: str) -> str:
    """The worker class `vllm.platforms.<platform>` sets for `worker_cls == "auto"`."""
    tree = source.tree(f"vllm.platforms.{platform}")
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "worker_cls" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise SystemExit(f"generate: vllm.platforms.{platform} sets no worker_cls")


def _c3(heads: list[list[str]]) -> list[str]:
    out: list[str] = []
    lists = [list(h) for h in heads if h]
    while lists:
        for candidate in (h[0] for h in lists):
            if not any(candidate in rest[1:] for rest in lists):
                break
        else:
            raise SystemExit(f"generate: no consistent MRO for {heads}")
        out.append(candidate)
        lists = [[c for c in h if c != candidate] for h in lists]
        lists = [h for h in lists if h]
    return out


class WorkerNames:
    """Every attribute name a vLLM worker class has as a class (what `hasattr` finds),
    through its MRO inside vLLM."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.classes: dict[str, tuple[str, ast.ClassDef]] = {}
        self.external: set[str] = set()

    def mro(self, module: str, name: str, depth: int = 0) -> list[str]:
        found = self.resolver.find(module, name)
        if found.kind != "class" or not isinstance(found.node, ast.ClassDef) or depth > 30:
            self.external.add(f"{found.module}.{found.name}")
            return []
        fqn = f"{found.module}.{found.name}"
        self.classes[fqn] = (found.module, found.node)
        bases: list[list[str]] = []
        for base in found.node.bases:
            if isinstance(base, ast.Name):
                bases.append(self.mro(found.module, base.id, depth + 1))
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                owner = self.resolver.find(found.module, base.value.id)
                if owner.kind == "module":
                    bases.append(self.mro(owner.module, base.attr, depth + 1))
                else:
                    self.external.add(ast.unparse(base))
            else:
                self.external.add(ast.unparse(base))
        direct = [b[0] for b in bases if b]
        return [fqn, *_c3([*bases, direct])]

    def describe(self, fqn: str) -> dict[str, Any]:
        module, _, name = fqn.rpartition(".")
        self.external = set()
        mro = self.mro(module, name)
        names: dict[str, dict[str, Any]] = {}
        for owner in mro:
            owner_module, node = self.classes[owner]
            for bound, line, kind in _class_names(node):
                names.setdefault(bound, {"name": bound, "owner": owner, "line": line, "kind": kind})
        return {
            "mro": mro,
            "files": {c: self.resolver.source.path(self.classes[c][0]) for c in mro},
            "external_bases": sorted(self.external),
            "names": [names[n] for n in sorted(names)],
        }


def _class_names(node: ast.ClassDef) -> Iterator[tuple[str, int, str]]:
    """(name, line, kind) of what a class body binds, as `hasattr(cls, name)` sees it:
    private names mangled, names starting with `__` left out (vLLM skips those)."""

    def body(stmts: list[ast.stmt]) -> Iterator[tuple[str, int, str]]:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorators = {ast.unparse(d) for d in stmt.decorator_list}
                is_property = bool(decorators & _PROPERTY_DECORATORS) or any(
                    d.endswith((".setter", ".getter", ".deleter")) for d in decorators
                )
                yield stmt.name, stmt.lineno, "property" if is_property else "method"
            elif isinstance(stmt, ast.ClassDef):
                yield stmt.name, stmt.lineno, "class"
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            yield sub.id, stmt.lineno, "attribute"
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                if isinstance(stmt.target, ast.Name):
                    yield stmt.target.id, stmt.lineno, "attribute"
            elif isinstance(stmt, ast.If):
                yield from body(stmt.body)
                yield from body(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                yield from body(stmt.body)
                for handler in stmt.handlers:
                    yield from body(handler.body)
                yield from body(stmt.orelse)
                yield from body(stmt.finalbody)

    for name, line, kind in body(node.body):
        if name.startswith("__") and not name.endswith("__"):
            name = f"_{node.name.lstrip('_')}{name}"
        if not name.startswith("__"):
            yield name, line, kind


def extension_rule(source: Source, resolver: Resolver) -> dict[str, Any]:
    platforms = {p: platform_worker(source, p) for p in PLATFORMS}
    names = WorkerNames(resolver)
    return {
        "rule": rule_site(source),
        "platforms": platforms,
        "default_platform": PLATFORMS[0],
        # `hasattr(worker_class, name)` also finds what the class's metaclass (`type`) has.
        "metaclass_names": sorted(n for n in dir(type) if not n.startswith("__")),
        "workers": {fqn: names.describe(fqn) for fqn in sorted(set(platforms.values()))},
    }


# ---------------------------------------------------------------------------------------
# Writing


HEADER = (
    "# Generated by stubs/generate.py from vLLM {version}; do not edit (see stubs/README.md).\n"
)


def render_class(described: Described) -> str:
    spec = described.spec
    base = f"({spec.base.rpartition('.')[2]})" if spec.base else ""
    lines = [f"class {spec.name}{base}:", f'    """{described.doc}"""', ""]
    for name, type_ in described.attributes:
        lines.append(f"    {name}: {type_}")
    if described.params:
        lines.append("    def __init__(")
        lines.append("        self,")
        star = False
        for param in described.params:
            if param.kind == "keyword-only" and not star:
                lines.append("        *,")
                star = True
            lines.append(f"        {param.stub()},")
        lines.append("    ) -> None: ...")
    text = "\n".join(lines) + "\n"
    return text + spec.extra.lstrip("\n") if spec.extra else text


def render_imports(imports: dict[str, set[str]]) -> str:
    """Import lines as isort (ruff's I001) orders them: standard library, then vLLM."""

    def by_type(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)

    def lines(modules: list[str]) -> str:
        return "".join(
            f"from {m} import {', '.join(sorted(imports[m], key=by_type))}\n" for m in modules
        )

    # isort counts `_typeshed` (it exists only for type checkers) as third-party, like vLLM.
    third_party = ("vllm", "_typeshed")
    stdlib = sorted(m for m in imports if m.split(".")[0] not in third_party and imports[m])
    vllm = sorted(m for m in imports if m.split(".")[0] in third_party and imports[m])
    return "\n".join(block for block in (lines(stdlib), lines(vllm)) if block)


OPAQUE_CLASS = '''class {name}{bases}:
    """Opaque: upstream {module}.{name}, named by the annotations above; not described."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Incomplete: ...
'''
MODULE_GETATTR = "def __getattr__(name: str) -> Incomplete: ...\n"


def opaque_bases(
    node: ast.ClassDef, module: str, render: Renderer, opaque: dict[str, dict[str, ast.ClassDef]]
) -> str:
    """The standard-library bases of an opaque class (a Sequence stays a Sequence).

    A base that would name another vLLM class not already in the stubs is left out,
    so that describing one class never pulls in a chain of others.
    """
    kept: list[str] = []
    for base in node.bases:
        probe = Renderer(render.resolver, stub_module=module)
        text = probe.annotation(base, module)
        new = {
            (m, n)
            for m, names in probe.opaque.items()
            for n in names
            if n not in opaque.get(m, {})
        }
        # An Enum without members is an error in a stub; the opaque class stands alone.
        stdlib = all(
            (m in STDLIB_TYPING and m != "enum") or m.startswith("vllm") for m in probe.imports
        )
        if text != "Any" and not new and not probe.unknown and stdlib:
            for m, names in probe.imports.items():
                for n in names:
                    render.need(m, n)
            kept.append(text)
    if any(m == "collections.abc" for m in render.imports) and kept:
        # Its own implementations of the ABC's methods are not described: abstract here.
        render.need("abc", "ABCMeta")
        kept.append("metaclass=ABCMeta")
    return f"({', '.join(kept)})" if kept else ""


def stub_path(module: str, package: bool) -> str:
    base = module.replace(".", "/")
    return f"{base}/__init__.pyi" if package else f"{base}.pyi"


def generate(wheel: Path) -> tuple[dict[str, str], dict[str, Any], set[str]]:
    """Stub files (relative path -> text), the manifest, and names rendered as Any."""
    source = Source(wheel)
    resolver = Resolver(source)
    describer = Describer(source, resolver)
    manifest: dict[str, Any] = {"vllm": source.version, "classes": {}, "opaque": {}}
    opaque: dict[str, dict[str, ast.ClassDef]] = {}
    unknown: set[str] = set()
    rendered: dict[str, tuple[Renderer, list[str], set[str]]] = {}
    for module, specs in GENERATED.items():
        render = Renderer(resolver, stub_module=module)
        for extra_module, extra_names in EXTRA_IMPORTS.get(module, {}).items():
            for name in extra_names:
                render.need(extra_module, name)
        bodies = []
        for spec in specs:
            described = describer.describe(spec, render)
            bodies.append(render_class(described))
            manifest["classes"][f"{module}.{spec.name}"] = {
                "init": spec.init,
                "base": spec.base,
                "params": [p.manifest() for p in described.params],
                "attributes": [{"name": n, "type": t} for n, t in described.attributes],
            }
        for opaque_module, classes in render.opaque.items():
            opaque.setdefault(opaque_module, {}).update(classes)
        unknown |= render.unknown
        rendered[module] = (render, bodies, {spec.name for spec in specs})
    header = HEADER.format(version=source.version)
    files: dict[str, str] = {}
    for module, classes in sorted(opaque.items()):
        described_here = rendered[module][2] if module in rendered else set()
        names = sorted(set(classes) - described_here)
        if not names:
            continue
        manifest["opaque"][module] = names
        render = (
            rendered[module][0] if module in rendered else Renderer(resolver, stub_module=module)
        )
        text = "\n".join(
            OPAQUE_CLASS.format(
                name=name, module=module, bases=opaque_bases(classes[name], module, render, opaque)
            )
            for name in names
        )
        if module in rendered:
            render, bodies, _ = rendered[module]
            render.need("typing", "Any")
            render.need("_typeshed", "Incomplete")
            bodies.append(text)
            continue
        render.need("typing", "Any")
        render.need("_typeshed", "Incomplete")
        files[stub_path(module, source.is_package(module))] = (
            header
            + render_imports(render.imports)
            + "\n"
            + text
            + "\n"
            + MODULE_GETATTR
        )
    for module, (render, bodies, _) in rendered.items():
        files[stub_path(module, source.is_package(module))] = (
            header
            + render_imports(render.imports)
            + "\n"
            + "\n".join(bodies)
        )
    # Every package on the way to a generated module needs an __init__.pyi.
    for path in list(files):
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = "/".join(parts[:i]) + "/__init__.pyi"
            if init not in files and init not in HAND_WRITTEN:
                files[init] = header + "from _typeshed import Incomplete\n\n" + MODULE_GETATTR
    manifest["files"] = sorted(files)
    manifest["extension_rule"] = extension_rule(source, resolver)
    return dict(sorted(files.items())), manifest, unknown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="a vllm-*.whl from `pip download`")
    args = parser.parse_args(argv)
    files, manifest, unknown = generate(args.wheel)
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"files": []}
    for stale in set(old.get("files", [])) - set(files):
        (HERE / stale).unlink(missing_ok=True)
    for path, text in files.items():
        target = HERE / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    MANIFEST.write_text(text)
    PACKAGED_MANIFEST.write_text(text)
    print(f"wrote {len(files)} stub files and {MANIFEST.name} for vLLM {manifest['vllm']}")
    for name in sorted(unknown):
        print(f"  rendered as Any: {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
