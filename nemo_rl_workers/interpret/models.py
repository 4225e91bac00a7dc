"""What a config block is at run time, where the tree declares it with a config model.

A tree's `setup` takes its config as a pydantic model (2026-08's `MasterConfig(BaseModel)`,
whose `policy` field is a TypedDict) or as a TypedDict (a plain dict at run time), and the
helpers a setup calls tell them apart: `isinstance(master_config, dict)`,
`getattr(master_config, "on_policy_distillation", None)`, `isinstance(cfg, BaseModel)`,
`cfg.model_dump(exclude_none=True)`. A YAML load gives dicts; what the tree's code holds
is the model's instance. This module answers those questions from the model's class
statements along its bases, never importing them: its kind, its fields with their
defaults, its dump. Where the statements do not decide (a base that is not the tree's, a
validator that may change values, a default that is not a literal, an alias), the answer
is None and the value is undecided.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nemo_rl_workers.interpret.expressions import Known
from nemo_rl_workers.tree.source.model import ClassInfo
from nemo_rl_workers.tree.source.parse import node_text
from nemo_rl_workers.tree.source.resolve import (
    base_names,
    dotted_name,
    resolve_fqn,
    resolve_local,
)

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source import Module, SourceTree

Kind = Literal["pydantic", "typeddict"]
PYDANTIC_BASE = "pydantic.BaseModel"
_TYPED_DICT = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})
MAX_BASES = 20  # classes followed up one model's bases (hostile source)
MAX_DUMP_DEPTH = 8  # nested models a dump follows
# Methods and decorators by which a pydantic model may change the values it was given.
_CHANGES_VALUES = ("validator", "model_post_init", "__init__", "serializer")
# Factories whose default is an empty container: `Field(default_factory=dict)`.
_EMPTY_FACTORIES: dict[str, object] = {"dict": {}, "list": [], "tuple": (), "set": set()}


@dataclass(frozen=True)
class Field:
    """A field a model's class body declares, and its default as a literal, if it has one
    the class statement decides (`missing`: it has none, or one not computed here)."""

    name: str
    annotation: ast.expr
    default: object = None
    missing: bool = True
    factory: str | None = None  # `default_factory=<a class>`: that class, as written


@dataclass(frozen=True)
class Lineage:
    """A model class and its bases of the tree, most derived first, and what they are."""

    kind: Kind
    classes: tuple[ClassInfo, ...]


def lineage(tree: SourceTree, info: ClassInfo) -> Lineage | None:
    """The model's kind from its bases (pydantic's `BaseModel` or `TypedDict`), or None
    where a base is neither the tree's own class nor one of those."""
    classes: list[ClassInfo] = []
    kinds: set[Kind] = set()
    queue = [info]
    while queue:
        current = queue.pop(0)
        if current in classes:
            continue
        classes.append(current)
        if len(classes) > MAX_BASES:
            return None
        for name in base_names(tree, current):
            if name == PYDANTIC_BASE:
                kinds.add("pydantic")
                continue
            if name in _TYPED_DICT:
                kinds.add("typeddict")
                continue
            found = resolve_fqn(tree, name)
            if found is None:
                return None
            queue.append(found)
    if len(kinds) != 1:
        return None
    return Lineage(kinds.pop(), tuple(classes))


def kind_of(tree: SourceTree, model: object) -> Kind | None:
    if not isinstance(model, ClassInfo):
        return None
    found = lineage(tree, model)
    return found.kind if found is not None else None


def is_subclass(tree: SourceTree, model: object, fqn: str) -> bool | None:
    """Whether an instance of `model` is an instance of the class `fqn` (pydantic's base
    or a class of the tree); None where the model's bases do not decide it."""
    if not isinstance(model, ClassInfo):
        return None
    found = lineage(tree, model)
    if found is None or found.kind != "pydantic":
        return None
    return fqn == PYDANTIC_BASE or any(c.fqn == fqn for c in found.classes)


def fields(tree: SourceTree, model: object) -> dict[str, Field] | None:
    """A pydantic model's fields along its bases (a derived class's declaration wins),
    or None where the model may change what it is given (a validator, an `__init__`,
    an alias) or is not a pydantic model the tree's statements describe."""
    if not isinstance(model, ClassInfo):
        return None
    found = lineage(tree, model)
    if found is None or found.kind != "pydantic":
        return None
    out: dict[str, Field] = {}
    for info in reversed(found.classes):
        for stmt in info.node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    any(word in stmt.name for word in _CHANGES_VALUES) or any(
                        word in node_text(d) for d in stmt.decorator_list
                        for word in _CHANGES_VALUES)):
                return None
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if "ClassVar" in node_text(stmt.annotation):
                continue
            field = declared_field(stmt)
            if field is None:
                return None
            out[field.name] = field
    return out


def declared_field(stmt: ast.AnnAssign) -> Field | None:
    """The field a class body's `name: T = ...` declares, its default read as pydantic
    reads it; None for an alias (what the YAML key is then is not the field's name)."""
    assert isinstance(stmt.target, ast.Name)
    name, value = stmt.target.id, stmt.value
    if value is None:
        return Field(name, stmt.annotation)  # required
    if isinstance(value, ast.Call) and _callee(value) == "Field":
        if any(k.arg in ("alias", "validation_alias") for k in value.keywords):
            return None
        factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
        if factory is not None:
            made = _EMPTY_FACTORIES.get(node_text(factory))
            if made is None and dotted_name(factory) is not None:
                # `default_factory=TeacherResourceConfig`: the model made of nothing,
                # dumped where the field's annotation names that model.
                return Field(name, stmt.annotation, {}, missing=False,
                             factory=dotted_name(factory))
            return Field(name, stmt.annotation) if made is None else Field(
                name, stmt.annotation, _fresh(made), missing=False)
        value = next((k.value for k in value.keywords if k.arg == "default"),
                     value.args[0] if value.args else None)
        if value is None:
            return Field(name, stmt.annotation)
    try:
        return Field(name, stmt.annotation, ast.literal_eval(value), missing=False)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Field(name, stmt.annotation)


Extra = Literal["allow", "ignore", "forbid"]
_EXTRAS: dict[object, Extra] = {"allow": "allow", "ignore": "ignore", "forbid": "forbid"}


def extra_mode(tree: SourceTree, model: object) -> Extra | None:
    """What the model does with keys it does not declare: keeps them (`extra="allow"`),
    drops them (pydantic's default) or refuses them; the first class along its bases that
    says decides. None where a class says so in a way not read here (`model_config`), or
    `model` is no pydantic model of the tree."""
    found = lineage(tree, model) if isinstance(model, ClassInfo) else None
    if found is None or found.kind != "pydantic":
        return None
    for info in found.classes:
        for keyword in info.node.keywords:
            if keyword.arg == "extra":
                value = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
                return _EXTRAS.get(value)
        for stmt in info.node.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and "model_config" in node_text(
                    stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target):
                return None
    return "ignore"


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)


def _fresh(value: object) -> object:
    return type(value)() if isinstance(value, (dict, list, set)) else value


# A field's model that is not one class of the tree (`dict[str, Model]`).
OPAQUE: Literal["opaque"] = "opaque"


def annotated_model(tree: SourceTree, owner: ClassInfo,
                    annotation: ast.expr) -> ClassInfo | None | Literal["opaque"]:
    """The model class a field's annotation declares its value with (`Optional[X]`,
    `X | None` and `NotRequired[X]` unwrapped); None for a plain value, what the YAML
    load gave (no pydantic model of the tree in it: `dict[str, Any]`, `int`,
    `T | list[T]` of a TypedDict `T`); OPAQUE where a pydantic model is in it but not as
    the one class (`dict[str, Model]`, a union of models)."""
    module = tree.modules.get(owner.module)
    if module is None:
        return OPAQUE
    node = _unwrapped(annotation)
    named = _named_class(tree, module, node)
    if named is not None:
        return named
    for sub in ast.walk(annotation):
        found = _named_class(tree, module, sub) if isinstance(
            sub, (ast.Name, ast.Attribute)) else None
        if found is not None and kind_of(tree, found) != "typeddict":
            return OPAQUE
    return None


def _unwrapped(node: ast.expr) -> ast.expr:
    for _ in range(MAX_BASES):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                return node
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [s for s in (node.left, node.right)
                     if not (isinstance(s, ast.Constant) and s.value is None)]
            if len(sides) != 1:
                return node
            node = sides[0]
            continue
        if isinstance(node, ast.Subscript) and dotted_name(node.value) is not None and str(
                dotted_name(node.value)).rpartition(".")[2] in _WRAPPERS and not isinstance(
                    node.slice, ast.Tuple):
            node = node.slice
            continue
        return node
    return node


_WRAPPERS = frozenset({"Optional", "NotRequired", "Required", "Annotated"})


def _named_class(tree: SourceTree, module: Module, node: ast.expr) -> ClassInfo | None:
    dotted = dotted_name(node)
    return resolve_fqn(tree, resolve_local(module, dotted)) if dotted is not None else None


def _named(tree: SourceTree, owner: ClassInfo, dotted: str) -> ClassInfo | None:
    module = tree.modules.get(owner.module)
    return resolve_fqn(tree, resolve_local(module, dotted)) if module is not None else None


def dump(tree: SourceTree, model: object, given: Mapping[str, object],
         exclude_none: bool) -> dict[str, object] | str:
    """`model.model_dump(exclude_none=...)` of the instance the tree makes from `given`
    (the YAML block), or why not: `construct`, then `instance_dump`."""
    if not isinstance(model, ClassInfo) or kind_of(tree, model) != "pydantic":
        return f"{getattr(model, 'name', 'its model')} is not a model whose dump is decided here"
    made = construct(tree, model, [], given)
    return made if isinstance(made, str) else instance_dump(made, exclude_none)


@dataclass(frozen=True, eq=False)
class Instance:
    """An instance of a pydantic model or a dataclass of the tree that a helper builds
    (`TeacherResourceConfig(**merged)`, `TeacherConfig(alias=..., ...)`): its fields, the
    model's defaults filled in, and the keys a pydantic model keeps beyond them
    (`model_extra`; None for a model that keeps none, or a dataclass)."""

    cls: ClassInfo
    values: Mapping[str, object]
    extra: Mapping[str, object] | None = None

    def __repr__(self) -> str:
        return f"{self.cls.name}(...)"


def construct(tree: SourceTree, cls: ClassInfo, args: list[object],
              kwargs: Mapping[str, object], depth: int = 0) -> Instance | str:
    """The instance `cls(*args, **kwargs)` makes, or why this check does not say: a
    pydantic model (keywords only; a nested model's block built in turn) or a plain
    `@dataclass` (no `__post_init__`, no bases) of the tree; a missing required field or
    an unknown keyword (the tree's code would raise) is said, not made."""
    if depth > MAX_DUMP_DEPTH:
        return "its models nest too deeply to follow"
    found = lineage(tree, cls)
    if found is not None and found.kind == "pydantic":
        return _construct_model(tree, cls, args, kwargs, depth)
    if _is_dataclass(cls):
        return _construct_dataclass(cls, args, kwargs)
    return f"{cls.name} is no pydantic model or dataclass whose instance is decided here"


def _construct_model(tree: SourceTree, cls: ClassInfo, args: list[object],
                     kwargs: Mapping[str, object], depth: int) -> Instance | str:
    declared = fields(tree, cls)
    extra = extra_mode(tree, cls)
    if declared is None:
        return (f"{cls.name} may change what it is given (a validator, an __init__, an "
                "alias), code this check does not run")
    if args:
        return f"{cls.name} takes its fields by keyword (a TypeError)"
    extras = {k: v for k, v in kwargs.items() if k not in declared}
    if extras and extra in (None, "forbid"):
        return f"{cls.name} keeps or refuses extra keys in a way not decided here"
    values: dict[str, object] = {}
    for name, field in declared.items():
        child = annotated_model(tree, cls, field.annotation)
        if name in kwargs:
            value = kwargs[name]
        elif field.missing or field.factory is not None and not (
                isinstance(child, ClassInfo) and _named(tree, cls, field.factory) is child):
            return f"{cls.name}.{name} is required or has no default this check computes"
        else:
            value = _fresh(field.default)  # `default_factory=<its model>`: made of nothing
        if child == OPAQUE and value not in (None, {}, []):
            return f"{cls.name}.{name} holds models in a way not followed here"
        if isinstance(child, ClassInfo) and value is not None and not isinstance(
                value, Instance):
            kind = kind_of(tree, child)
            if kind is None or not isinstance(value, Mapping):
                return f"{cls.name}.{name} is a {child.name} not decided here"
            if kind == "pydantic":
                nested = construct(tree, child, [], value, depth + 1)
                if isinstance(nested, str):
                    return nested
                value = nested
        values[name] = value
    return Instance(cls, values, extras if extra == "allow" else None)


def _construct_dataclass(cls: ClassInfo, args: list[object],
                         kwargs: Mapping[str, object]) -> Instance | str:
    if cls.node.bases or "__post_init__" in cls.methods:
        return f"{cls.name} is a dataclass whose instance is not decided here"
    order: list[tuple[str, ast.AnnAssign]] = [
        (stmt.target.id, stmt) for stmt in cls.node.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        and "ClassVar" not in node_text(stmt.annotation)]
    names = [name for name, _ in order]
    if len(args) > len(names) or any(k not in names for k in kwargs) or any(
            k in names[:len(args)] for k in kwargs):
        return f"{cls.name}(...) is called with arguments it does not take (a TypeError)"
    values: dict[str, object] = dict(zip(names, args, strict=False)) | dict(kwargs)
    for name, stmt in order:
        if name in values:
            continue
        try:
            values[name] = ast.literal_eval(stmt.value) if stmt.value is not None else _NONE
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            values[name] = _NONE
        if values[name] is _NONE:
            return f"{cls.name}.{name} is not given and has no default this check computes"
    return Instance(cls, values)


_NONE = object()  # no default


def _is_dataclass(cls: ClassInfo) -> bool:
    return any(d.rpartition(".")[2].partition("(")[0] == "dataclass" for d in cls.decorators)


def instance_dump(instance: Instance, exclude_none: bool) -> dict[str, object]:
    """`instance.model_dump(exclude_none=...)`: its fields and the extras it keeps, a
    nested model dumped in turn."""
    out: dict[str, object] = {}
    for key, value in {**instance.values, **(instance.extra or {})}.items():
        if isinstance(value, Instance):
            value = instance_dump(value, exclude_none)
        if not (exclude_none and value is None):
            out[key] = value
    return out


def config_model(tree: SourceTree, module: Module | None, annotation: str | None) -> object:
    """The tree's class an annotation names (`MasterConfig`), or None."""
    from nemo_rl_workers.tree.entry_configs import class_named

    return class_named(tree, module, annotation)


def model_field(tree: SourceTree, model: object, key: str) -> tuple[Known | None, object]:
    """A config model's field `key`, as its class body declares it: `key: T = <literal>`
    or `key: T = Field(default=<literal>)` gives its default; `T` naming a class of the
    tree (`Optional[T]` too) gives the field's own model, and `dict[str, T]` an opaque
    one (`annotated_model`). Bases are not followed (no default:
    undecided)."""
    if not isinstance(model, ClassInfo):
        return None, None
    # The class body decides it, whatever the config: looked up once per class and key.
    kept: dict[str, tuple[bool, object, object]] | None = getattr(model.node, _FIELDS_KEPT,
                                                                  None)
    if kept is None:
        kept = {}
        setattr(model.node, _FIELDS_KEPT, kept)
    found = kept.get(key)
    if found is None:
        found = kept[key] = _model_field(tree, model, key)
    has_default, default, child = found
    return (Known(copy.deepcopy(default)) if has_default else None), child


_FIELDS_KEPT = "_nemo_rl_workers_fields"


def _model_field(tree: SourceTree, model: ClassInfo, key: str) -> tuple[bool, object, object]:
    for stmt in model.node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and stmt.target.id == key):
            continue
        child = annotated_model(tree, model, stmt.annotation)
        field = declared_field(stmt)  # the model's field as pydantic reads it
        if field is None or field.missing or field.factory is not None:
            return False, None, child
        return True, field.default, child
    return False, None, None

__all__ = ["OPAQUE", "PYDANTIC_BASE", "Field", "Instance", "Kind", "Lineage", "annotated_model",
           "config_model", "construct", "declared_field", "dump", "extra_mode", "fields",
           "instance_dump", "is_subclass", "kind_of", "lineage", "model_field"]
