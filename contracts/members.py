"""Member lookup: where a class gets a member from, what kind it is, and where it is defined.

Instances see what the class MRO provides (never the metaclass, as typing's Protocol
check). A member whose only definition is a Protocol class body that is implicitly
abstract (`...`, `pass`, a docstring, `raise NotImplementedError`) or `@abstractmethod`
is not implemented: an explicit subclass of the Protocol that forgets it inherits a
body that returns None.
"""

from __future__ import annotations

import ast
import collections.abc as cabc
import dis
import functools
import inspect
import os
import textwrap
import types
import typing
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from typing_extensions import get_protocol_members, is_protocol

MethodKind: TypeAlias = Literal["instance method", "staticmethod", "classmethod"]
AsyncKind: TypeAlias = Literal[
    "coroutine function (async def)", "async generator function", "plain function"
]


def fqn(obj: type | types.FunctionType) -> str:
    """`module.QualName` of a class or function."""
    return f"{obj.__module__}.{obj.__qualname__}"


def static_member(cls: type, name: str) -> object:
    """The raw attribute (function, staticmethod, ...) `name` in the class MRO.

    Like `inspect.getattr_static` but without the metaclass: an instance does not
    see metaclass attributes, and typing's Protocol check does not either.
    """
    return vars(owner_of(cls, name))[name]


def owner_of(cls: type, name: str) -> type:
    """The first class of the MRO whose namespace defines `name`."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass
    raise AttributeError(name)


def vars_lookup(cls: type, name: str) -> object | None:
    """`static_member`, or None when the name is only annotated (a data member)."""
    try:
        return static_member(cls, name)
    except AttributeError:
        return None


# `T = TypeVar("T")` in a class body declares a type variable for annotations, not an
# attribute of instances; typing still lists the name among the Protocol's members.
# typing_extensions' TypeVar, ParamSpec and TypeVarTuple make instances of typing's own.
_TYPE_PARAMETERS: Final = (typing.TypeVar, typing.ParamSpec, typing.TypeVarTuple)


def protocol_members(protocol: type) -> list[str]:
    """The Protocol's members, base Protocols' first, each in definition order; a type
    variable assigned in a Protocol body is not one."""
    members = get_protocol_members(protocol)
    ordered: list[str] = []
    for klass in reversed(protocol.__mro__):
        for name in [*vars(klass), *vars(klass).get("__annotations__", {})]:
            if name in members and name not in ordered and not _declares_type_variable(klass, name):
                ordered.append(name)
    return ordered


def body_type_variables(cls: type, name: str) -> dict[str, object]:
    """Type variables assigned in the body of the class defining `cls.name`: annotations of
    its methods may name them (`from __future__ import annotations` leaves them as text)."""
    try:
        namespace = vars(owner_of(cls, name))
    except AttributeError:
        return {}
    return {k: v for k, v in namespace.items() if isinstance(v, _TYPE_PARAMETERS)}


def _declares_type_variable(klass: type, name: str) -> bool:
    annotated = name in vars(klass).get("__annotations__", {})
    return not annotated and isinstance(vars(klass).get(name), _TYPE_PARAMETERS)


def method_kind(raw: object) -> MethodKind:
    """How a class attribute binds when called through an instance."""
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, classmethod):
        return "classmethod"
    # Functions and other descriptors bind the instance; plain callables do not.
    return "instance method" if hasattr(type(raw), "__get__") else "staticmethod"


def async_kind(func: object) -> AsyncKind:
    if inspect.isasyncgenfunction(func):
        return "async generator function"
    if inspect.iscoroutinefunction(func):
        return "coroutine function (async def)"
    return "plain function"


def article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


# --- Implicitly abstract Protocol bodies -------------------------------------------------

_TRIVIAL_OPS: Final = frozenset(
    {"RESUME", "NOP", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST", "POP_TOP", "CACHE"}
)
_RAISE_OPS: Final = frozenset(
    {"LOAD_GLOBAL", "LOAD_NAME", "PRECALL", "CALL", "RAISE_VARARGS", "PUSH_NULL"}
    | {"LOAD_CONST", "RESUME", "CACHE", "KW_NAMES"}
)


@functools.cache
def _trivial_code(code: types.CodeType) -> bool:
    instructions = list(dis.get_instructions(code))
    ops = [i.opname for i in instructions]
    consts = [i.argval for i in instructions if i.opname in ("LOAD_CONST", "RETURN_CONST")]
    if set(ops) <= _TRIVIAL_OPS:
        return all(value is None for value in consts)  # `...`, `pass`, a docstring
    return (
        "RAISE_VARARGS" in ops
        and set(ops) <= _RAISE_OPS
        and set(code.co_names) <= {"NotImplementedError", "NotImplemented"}
    )


def function_of(raw: object) -> types.FunctionType | None:
    """The plain function behind a method, staticmethod, classmethod or property getter."""
    if isinstance(raw, (staticmethod, classmethod)):
        raw = raw.__func__
    if isinstance(raw, property):
        raw = raw.fget
    if isinstance(raw, functools.cached_property):
        raw = raw.func
    if not isinstance(raw, types.FunctionType):
        # A callable wrapper (functools.wraps) names the function it stands for.
        raw = getattr(raw, "__wrapped__", None)
    return raw if isinstance(raw, types.FunctionType) else None


def is_abstract(raw: object) -> bool:
    """`@abstractmethod`, or a body a type checker treats as not implemented."""
    try:
        if getattr(raw, "__isabstractmethod__", False):
            return True
    except Exception:  # noqa: BLE001 - a hostile descriptor
        return False
    func = function_of(raw)
    return func is not None and _trivial_code(func.__code__)


def inherited_protocol_body(cls: type, name: str) -> type | None:
    """The Protocol whose abstract body is all `cls` has for `name`, or None."""
    if is_protocol(cls):
        return None  # a Protocol checked against another one: members stay declarations
    try:
        owner = owner_of(cls, name)
    except AttributeError:
        return None
    abstract = name in getattr(cls, "__abstractmethods__", ())
    if abstract or (is_protocol(owner) and is_abstract(vars(owner)[name])):
        return owner
    return None


# --- Overloads declared without an implementation ----------------------------------------


def _probe() -> None: ...


# `typing.overload` returns one shared placeholder for every overload; calling it on a
# probe is the public way to get that placeholder (typing_extensions re-exports typing's).
_OVERLOAD_PLACEHOLDER: Final = typing.overload(_probe)


def is_overload_placeholder(raw: object) -> bool:
    """Is `raw` (or the function behind it) what `@overload` leaves without an implementation?"""
    return function_of(raw) is _OVERLOAD_PLACEHOLDER or raw is _OVERLOAD_PLACEHOLDER


def declared_overloads(cls: type, name: str) -> list[types.FunctionType]:
    """The `@overload` signatures of `cls.name` when only overloads declare it.

    The class attribute is the shared placeholder, which names no overload. `typing`
    registers each overload under the module and qualified name of the function it
    decorated, and `typing.get_overloads` looks them up by exactly those two attributes
    of what it is given; a stand-in function carrying the defining class's module and
    `<class qualname>.<name>` finds them. No source file is needed (classes made by
    `exec` or in a REPL work too), and no private registry is read.
    """
    owner = owner_of(cls, name)

    def stand_in() -> None: ...

    stand_in.__module__ = owner.__module__
    stand_in.__qualname__ = f"{owner.__qualname__}.{name}"
    return [f for f in typing.get_overloads(stand_in) if isinstance(f, types.FunctionType)]


# --- Where a member is defined ------------------------------------------------------------


def location(raw: object) -> str:
    """`file:line` of the `def` behind a member; empty when there is no source."""
    func = function_of(raw)
    if func is None:
        return ""
    code = func.__code__
    if code.co_filename.startswith("<"):
        return ""
    return f"{_shown_path(code.co_filename)}:{code.co_firstlineno}"


@functools.lru_cache(maxsize=1024)
def _shown_path(path: str) -> str:
    """Relative to the working directory when the file lies under it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


# --- Data members ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribute:
    """How a class provides a data member."""

    where: Literal["annotation", "class value", "property", "init", "method"]
    hint: object  # the member's type, or _UNKNOWN
    settable: bool
    raw: object = None


UNKNOWN: Final = object()


def class_annotation(cls: type, name: str) -> tuple[bool, object]:
    """(found, resolved hint) of `name` annotated in a class body of the MRO."""
    for klass in cls.__mro__:
        ann = vars(klass).get("__annotations__", {})
        if isinstance(ann, dict) and name in ann:
            try:
                hints = typing.get_type_hints(klass, include_extras=True)
                return True, hints.get(name, UNKNOWN)
            except Exception:  # noqa: BLE001 - an unresolvable annotation elsewhere
                return True, UNKNOWN
    return False, UNKNOWN


def assigned_in_methods(cls: type, name: str) -> str | None:
    """`file:line` of a method storing `self.<name>`, found in its bytecode; else None."""
    found = _assigning_method(cls, name)
    return None if found is None else found[0]


def _assigning_method(cls: type, name: str) -> tuple[str, types.FunctionType] | None:
    for klass in cls.__mro__:
        if klass is object:
            continue
        for raw in list(vars(klass).values()):
            func = function_of(raw)
            if func is None or name not in func.__code__.co_names:
                continue
            for ins in dis.get_instructions(func.__code__):
                if ins.opname == "STORE_ATTR" and ins.argval == name:
                    line = ins.positions.lineno if ins.positions else None
                    where = location(func).rsplit(":", 1)[0]
                    return f"{where}:{line or func.__code__.co_firstlineno}", func
    return None


def assigned_type(cls: type, name: str) -> object:
    """The type a method gives `self.<name>`: its annotation (`self.x: T = ...`) or a
    literal's class, read from the method's source; UNKNOWN when it cannot be read."""
    found = _assigning_method(cls, name)
    if found is None:
        return UNKNOWN
    func = found[1]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return UNKNOWN
    seen: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and _is_self_attr(node.target, name):
            try:
                return eval(ast.unparse(node.annotation), func.__globals__)  # noqa: S307 - the class's own annotation
            except Exception:  # noqa: BLE001 - an annotation that does not resolve
                return UNKNOWN
        if isinstance(node, ast.Assign) and any(_is_self_attr(t, name) for t in node.targets):
            value = node.value
            seen.append(type(value.value) if isinstance(value, ast.Constant) else UNKNOWN)
    return seen[0] if len(set(map(id, seen))) == 1 else UNKNOWN


def _is_self_attr(target: ast.expr, name: str) -> bool:
    return (
        isinstance(target, ast.Attribute)
        and target.attr == name
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    )


def is_method(raw: object) -> bool:
    if isinstance(raw, (staticmethod, classmethod, types.FunctionType)):
        return True
    return callable(raw) and not isinstance(raw, type)


def is_callable_hint(hint: object) -> bool:
    return (typing.get_origin(hint) or hint) is cabc.Callable
