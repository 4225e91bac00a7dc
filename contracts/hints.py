"""Annotations and generics: resolve hints, substitute type variables, compare two hints.

`is_subhint_safe(sub, sup)` answers "is every `sub` a `sup`?" the way the typing spec
does: unions, `Literal`, PEP 484's numeric promotion (also inside containers), variance
per generic origin, callables, tuples, TypedDicts (PEP 589), nested Protocols compared
structurally (runtime-checkable or not) and type variables. A TypeVar left in a hint is
*rigid* (the Protocol's method-scoped variables: a caller may pick any type for it).
beartype's `is_subhint` is the fallback for forms not handled here; `Undecidable` is
raised when nothing can answer.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import types
import typing
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import typing_extensions
from beartype.door import is_bearable, is_subhint
from typing_extensions import is_protocol, is_typeddict

# Resolved annotations by name, and (name, error) for those that do not resolve.
ResolvedHints: TypeAlias = tuple[dict[str, object], list[tuple[str, str]]]


class Undecidable(Exception):
    """Neither the rules here nor beartype can compare two hints."""


def resolve_hints(
    func: object, localns: cabc.Callable[[], Mapping[str, object]] | None = None
) -> ResolvedHints:
    """Resolved annotations of `func`, and (name, error) for each one that does not resolve.

    One unresolvable annotation does not hide the others: on failure each is tried alone.
    `localns()` gives names of the defining class body (its type variables); asked only
    when the module's globals do not resolve every annotation. The globals are found here,
    never by `typing.get_type_hints`: it follows `__wrapped__` with no cycle check, so a
    wrapper that wraps itself would hang it.
    """
    target: object = getattr(func, "__func__", func)  # bound classmethods
    try:
        raw = getattr(target, "__annotations__", None)
    except Exception:  # noqa: BLE001 - a hostile __annotations__ property
        return {}, []
    if not isinstance(raw, dict) or not raw:
        return {}, []
    fast = _fast_hints(target, raw)
    if fast is not None:
        return fast, []
    local = dict(localns()) if localns is not None else None
    local = local or None
    globalns = _globals_of(target)
    try:
        found = typing.get_type_hints(
            target, globalns=globalns, localns=local, include_extras=True
        )
        return dict(found), []
    except Exception:  # noqa: BLE001 - any resolution error falls back to one by one
        pass
    hints: dict[str, object] = {}
    unresolved: list[tuple[str, str]] = []
    for key, value in raw.items():
        one = types.SimpleNamespace(__annotations__={key: value})
        try:
            hints[key] = typing.get_type_hints(
                one, globalns=globalns, localns=local, include_extras=True
            )[key]
        except Exception as exc:  # noqa: BLE001 - NameError, SyntaxError, TypeError alike
            unresolved.append((key, f"{type(exc).__name__}: {exc}"))
    return hints, unresolved


def _globals_of(target: object) -> dict[str, Any]:
    """The globals of the function `target` stands for (through `__wrapped__`, cycle-safe)."""
    try:
        unwrapped = inspect.unwrap(typing.cast("cabc.Callable[..., object]", target))
    except Exception:  # noqa: BLE001 - a __wrapped__ cycle (ValueError) or a hostile attribute
        unwrapped = target
    globalns = safe_getattr(unwrapped, "__globals__")
    if not isinstance(globalns, dict):
        globalns = safe_getattr(target, "__globals__")
    return globalns if isinstance(globalns, dict) else {}


def safe_getattr(obj: object, name: str) -> object:
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - a hostile descriptor
        return None


# (annotation text, id of the globals it is evaluated in) -> its value. Annotations repeat
# ("None", "bool", "TrainBatch"); evaluating each text once per module saves most of the
# cost of typing.get_type_hints. Cleared with the verifier's cache (see clear_hint_cache).
_EVALUATED: dict[tuple[str, int], object] = {}


def clear_hint_cache() -> None:
    _EVALUATED.clear()


def _fast_hints(target: object, raw: dict[str, object]) -> dict[str, object] | None:
    """What `typing.get_type_hints(target, include_extras=True)` returns for a plain
    function whose annotations are strings or classes; None to take the full path."""
    globalns = getattr(target, "__globals__", None)
    if not isinstance(globalns, dict) or hasattr(target, "__wrapped__"):
        return None
    hints: dict[str, object] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            cache_key = (value, id(globalns))
            if cache_key not in _EVALUATED:
                try:
                    _EVALUATED[cache_key] = eval(value, globalns)  # noqa: S307 - as get_type_hints does
                except Exception:  # noqa: BLE001 - the full path reports it
                    return None
            value = _EVALUATED[cache_key]
        if value is None:
            value = type(None)
        if not _resolved(value):
            return None
        hints[key] = value
    return hints


def _resolved(hint: object) -> bool:
    """No string or ForwardRef left inside (Literal's values are data, not hints)."""
    if isinstance(hint, (str, typing.ForwardRef)):
        return False
    if typing.get_origin(hint) is Literal:
        return True
    return all(
        all(_resolved(a) for a in arg) if isinstance(arg, list) else _resolved(arg)
        for arg in typing.get_args(hint)
    )


def as_hint(hint: object) -> Any:  # noqa: ANN401
    # beartype types its hint parameters differently for mypy and pyrefly; the hints
    # handled here come from get_type_hints and are valid at runtime.
    return hint


def bearable(value: object, hint: object) -> bool:
    """`beartype.door.is_bearable` for a hint held as a plain object."""
    return is_bearable(value, as_hint(hint))


# ---------------------------------------------------------------------------------------
# Substitution

_UNIONS: Final = (typing.Union, types.UnionType)
_SELF: Final = (typing.Self, typing_extensions.Self)


def subscript(origin: Any, args: Any) -> object:  # noqa: ANN401
    """`origin[args]` for hints built at runtime (the checkers see no type form here)."""
    return origin[args]


def substitute(hint: object, mapping: Mapping[object, object]) -> object:
    """`hint` with each key of `mapping` (TypeVars, `Self`) replaced inside it."""
    if not mapping:
        return hint
    try:
        if hint in mapping:
            return mapping[hint]
    except TypeError:  # unhashable hint
        return hint
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if not args or origin is Literal:
        return hint
    if origin is typing.Annotated:
        inner = substitute(args[0], mapping)
        return hint if inner is args[0] else inner
    if origin is cabc.Callable and isinstance(args[0], list):
        params = [substitute(a, mapping) for a in args[0]]
        return subscript(cabc.Callable, (params, substitute(args[1], mapping)))
    new = tuple(substitute(a, mapping) for a in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return hint
    if origin in _UNIONS:
        return subscript(typing.Union, new)
    copy_with = getattr(hint, "copy_with", None)
    if callable(copy_with):
        return copy_with(new)
    if isinstance(hint, types.GenericAlias) and origin is not None:
        return types.GenericAlias(origin, new)
    return hint


def generic_maps(cls: type, args: tuple[object, ...] = ()) -> dict[type, dict[object, object]]:
    """For `cls[args]` and each generic base, how its own type variables are bound
    (missing arguments read as Any): `class Impl(Base[int])` binds Base's T to int.
    Per class, since two classes may use the same TypeVar object for different things."""
    params: tuple[object, ...] = getattr(cls, "__parameters__", ())
    for base in getattr(cls, "__orig_bases__", ()):
        # `Protocol[T, S]` / `Generic[T, S]` fix the order (Python 3.11 may not keep it).
        if typing.get_origin(base) in (typing.Generic, typing.Protocol) and typing.get_args(base):
            params = typing.get_args(base)
    mapping: dict[object, object] = {
        p: (args[i] if i < len(args) else Any) for i, p in enumerate(params)
    }
    maps: dict[type, dict[object, object]] = {cls: mapping}
    for base in getattr(cls, "__orig_bases__", ()):
        origin = typing.get_origin(base)
        if not isinstance(origin, type) or origin in (typing.Generic, typing.Protocol):
            continue
        bound = tuple(substitute(a, mapping) for a in typing.get_args(base))
        for klass, inner in generic_maps(origin, bound).items():
            maps.setdefault(klass, inner)
    return maps


def type_vars(hint: object) -> set[typing.TypeVar]:
    """The TypeVars that occur in `hint`."""
    if isinstance(hint, typing.TypeVar):
        return {hint}
    found: set[typing.TypeVar] = set()
    args = typing.get_args(hint)
    if typing.get_origin(hint) is Literal:
        return found
    for arg in args:
        found |= (
            type_vars(arg)
            if not isinstance(arg, list)
            else set().union(*(type_vars(a) for a in arg))
        )
    return found


def solve(
    pattern: object, given: object, flexible: set[typing.TypeVar], into: dict[object, object]
) -> None:
    """Bind the `flexible` TypeVars of `pattern` so that `given` fits it (best effort)."""
    if isinstance(pattern, typing.TypeVar) and pattern in flexible:
        seen = into.get(pattern)
        if seen is None or _try_subhint(seen, given):
            into[pattern] = given
        elif not _try_subhint(given, seen):
            into[pattern] = subscript(typing.Union, (seen, given))
        return
    p_origin, g_origin = typing.get_origin(pattern), typing.get_origin(given)
    p_args, g_args = typing.get_args(pattern), typing.get_args(given)
    if p_origin in _UNIONS:
        for arg in p_args:
            if type_vars(arg) & flexible:
                solve(arg, given, flexible, into)
        return
    if p_args and g_args and len(p_args) == len(g_args):
        if p_origin is g_origin or (
            isinstance(p_origin, type)
            and isinstance(g_origin, type)
            and issubclass(g_origin, p_origin)
        ):
            for p, g in zip(p_args, g_args, strict=True):
                if isinstance(p, list) and isinstance(g, list) and len(p) == len(g):
                    for pp, gg in zip(p, g, strict=True):
                        solve(pp, gg, flexible, into)
                elif not isinstance(p, list):
                    solve(p, g, flexible, into)


def typevar_problem(var: typing.TypeVar, value: object) -> str | None:
    """Why `value` cannot stand for `var` (its bound or constraints), or None."""
    if isinstance(value, typing.TypeVar):  # a rigid variable of the Protocol
        if var.__constraints__:
            inner = value.__constraints__ or ((value.__bound__,) if value.__bound__ else ())
            if inner and all(any(_try_subhint(c, w) for w in var.__constraints__) for c in inner):
                return None
            return f"{value.__name__} is not within the constraints of {var.__name__}"
    bound = var.__bound__
    if bound is not None and not _try_subhint(value, bound):
        return f"{show_hint(value)} is not within the bound {show_hint(bound)} of {var.__name__}"
    constraints = var.__constraints__
    if constraints and not any(_try_subhint(value, c) for c in constraints):
        return f"{show_hint(value)} is none of the constraints of {var.__name__}"
    return None


def pick_constraint(var: typing.TypeVar, value: object) -> object:
    """A constrained TypeVar takes the constraint the value fits, not the value itself."""
    if isinstance(value, typing.TypeVar):
        return value
    for constraint in var.__constraints__:
        if _try_subhint(value, constraint):
            return constraint
    return value


# ---------------------------------------------------------------------------------------
# Subtyping

# Variance of each generic origin's arguments: "+" covariant, "=" invariant, "-" contravariant.
_VARIANCE: Final[dict[object, str]] = {
    cabc.Iterable: "+",
    cabc.Iterator: "+",
    cabc.AsyncIterable: "+",
    cabc.AsyncIterator: "+",
    cabc.Awaitable: "+",
    cabc.Sequence: "+",
    cabc.Collection: "+",
    cabc.Container: "+",
    cabc.Reversible: "+",
    cabc.Set: "+",
    cabc.KeysView: "+",
    cabc.ValuesView: "+",
    cabc.ItemsView: "++",
    frozenset: "+",
    type: "+",
    cabc.Mapping: "=+",
    cabc.Coroutine: "+-+",
    cabc.Generator: "+-+",
    cabc.AsyncGenerator: "+-",
}
# Classes that fix the arguments of the generic ABCs they implement.
_FIXED_ARGS: Final[dict[object, tuple[object, ...]]] = {
    str: (str,),
    bytes: (int,),
    bytearray: (int,),
    range: (int,),
}
# PEP 484's numeric promotion, which beartype's is_subhint does not apply.
_NUMERIC_TOWER: Final[dict[object, frozenset[type]]] = {
    float: frozenset({int, bool}),
    complex: frozenset({int, float, bool}),
}
_NEVER: Final = (
    typing.NoReturn,
    typing_extensions.Never,
    getattr(typing, "Never", typing.NoReturn),
)

# (sub, sup) pairs being compared structurally right now: a recursive Protocol is
# assumed to hold for the pair in progress (the spec's coinductive rule).
_IN_PROGRESS: set[tuple[object, object]] = set()


def is_subhint_safe(sub: object, sup: object) -> bool:
    """Is every `sub` a `sup`? Raises `Undecidable` when no answer can be given."""
    if sub is sup or _same(sub, sup):
        return True
    sub, sup = _plain(sub), _plain(sup)
    if sup is Any or sup is object or sub is Any or sub in _NEVER:
        return True
    if sub in _NUMERIC_TOWER.get(sup, ()):
        return True
    if sub is type(None) and sup is type(None):
        return True
    sub_origin, sup_origin = typing.get_origin(sub), typing.get_origin(sup)
    if sub_origin in _UNIONS:
        return all(is_subhint_safe(arg, sup) for arg in typing.get_args(sub))
    if isinstance(sub, typing.TypeVar):
        if isinstance(sup, typing.TypeVar):
            return False  # different rigid variables
        if sub.__constraints__:
            return all(is_subhint_safe(c, sup) for c in sub.__constraints__)
        return sub.__bound__ is not None and is_subhint_safe(sub.__bound__, sup)
    if sup_origin in _UNIONS:
        return any(_try_subhint(sub, arg) for arg in typing.get_args(sup))
    if isinstance(sup, typing.TypeVar):
        return False
    if sub_origin is Literal:
        return all(_literal_fits(value, sup) for value in typing.get_args(sub))
    if sup_origin is Literal:
        return False
    if is_typeddict(sub) or is_typeddict(sup):
        return _typeddict_subhint(sub, sup)
    base_sup = sup_origin if sup_origin is not None else sup
    if isinstance(base_sup, type) and _is_protocol(base_sup):
        if sub_origin is cabc.Callable:
            sub = callable_class(sub)  # compared with the Protocol's __call__
        return _protocol_subhint(sub, sup)
    if sub_origin is cabc.Callable or sup_origin is cabc.Callable:
        return _callable_subhint(sub, sup)
    if (sub_origin or sub) is tuple and (sup_origin or sup) is tuple:
        return _tuple_subhint(sub, sup)
    try:
        return _generic_subhint(sub, sup)
    except Undecidable:
        pass
    try:
        return is_subhint(as_hint(sub), as_hint(sup))
    except Exception as exc:  # noqa: BLE001 - beartype raises its own and TypeErrors
        raise Undecidable(f"{type(exc).__name__}") from exc


def _plain(hint: object) -> object:
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint is None:
        return type(None)
    return hint


def _same(a: object, b: object) -> bool:
    try:
        return a == b
    except Exception:  # noqa: BLE001 - exotic hints may not compare
        return False


def _try_subhint(sub: object, sup: object) -> bool:
    try:
        return is_subhint_safe(sub, sup)
    except Undecidable:
        return False


def _is_protocol(cls: type) -> bool:
    try:
        return is_protocol(cls)
    except Exception:  # noqa: BLE001 - a hostile metaclass
        return False


def _literal_fits(value: object, sup: object) -> bool:
    if typing.get_origin(sup) is Literal:
        return any(value == v and type(value) is type(v) for v in typing.get_args(sup))
    return is_subhint_safe(type(value), sup)


@functools.lru_cache(maxsize=256)
def callable_class(hint: object) -> type:
    """A class whose instances' `__call__` has the signature of `Callable[[...], R]`
    (positional-only parameters), so the member rules can compare it with a Protocol."""
    args = typing.get_args(hint)
    params, ret = (args[0], args[-1]) if args else (Ellipsis, Any)
    if params is Ellipsis or not isinstance(params, list):
        parameters = [
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL, annotation=Any),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation=Any),
        ]
    else:
        parameters = [
            inspect.Parameter(f"p{i}", inspect.Parameter.POSITIONAL_ONLY, annotation=t)
            for i, t in enumerate(params)
        ]

    def call(*args: object, **kwargs: object) -> object:
        raise NotImplementedError

    vars(call)["__signature__"] = inspect.Signature(parameters, return_annotation=ret)
    call.__annotations__ = {
        **{p.name: p.annotation for p in parameters},
        "return": ret,
    }
    return type(show_hint(hint), (), {"__call__": staticmethod(call)})


def _protocol_subhint(sub: object, sup: object) -> bool:
    sub_origin = typing.get_origin(sub) or sub
    sup_origin = typing.get_origin(sup) or sup
    if not isinstance(sub_origin, type):
        raise Undecidable("not a class")
    if sup_origin in sub_origin.__mro__ and not typing.get_args(sup):
        return True  # nominal subclass of an unspecialised Protocol
    key = (sub, sup)
    if key in _IN_PROGRESS:
        return True
    if not _PROTOCOL_RULES:
        raise Undecidable("the member rules are not loaded (import contracts)")
    _IN_PROGRESS.add(key)
    try:
        return _PROTOCOL_RULES[0](sub_origin, sup)
    finally:
        _IN_PROGRESS.discard(key)


# The member rules that decide whether a class implements a Protocol named in an annotation.
# They live above this module (`contracts.verify` imports it) and register themselves here
# when imported, so this module never imports them: no import cycle.
_PROTOCOL_RULES: list[cabc.Callable[[type, object], bool]] = []


def use_protocol_rules(rules: cabc.Callable[[type, object], bool]) -> None:
    """Decide structural Protocol annotations with `rules(cls, protocol) -> implements?`."""
    _PROTOCOL_RULES[:] = [rules]


def _callable_subhint(sub: object, sup: object) -> bool:
    sub_origin, sup_origin = typing.get_origin(sub), typing.get_origin(sup)
    if sup_origin is not cabc.Callable:
        return False  # a callable is none of the other forms handled here
    if sub_origin is type and typing.get_args(sub) and typing.get_args(sup):
        # A class is callable: calling it makes an instance.
        params, ret = typing.get_args(sup)[0], typing.get_args(sup)[-1]
        if params is not Ellipsis:
            raise Undecidable("a class's constructor against a Callable")
        return is_subhint_safe(typing.get_args(sub)[0], ret)
    if sub_origin is not cabc.Callable:
        if isinstance(sub, type) and "__call__" not in dir(sub):
            return False
        if typing.get_origin(sub) is not None:
            return False  # e.g. a Sequence[int]
        raise Undecidable("a callable class against a Callable")
    sub_args, sup_args = typing.get_args(sub), typing.get_args(sup)
    if not sup_args or not sub_args:
        return True
    sub_params, sub_ret = sub_args[0], sub_args[-1]
    sup_params, sup_ret = sup_args[0], sup_args[-1]
    if not is_subhint_safe(sub_ret, sup_ret):
        return False
    if sub_params is Ellipsis or sup_params is Ellipsis:
        return True
    if not (isinstance(sub_params, list) and isinstance(sup_params, list)):
        raise Undecidable("ParamSpec or Concatenate")
    if len(sub_params) != len(sup_params):
        return False
    return all(is_subhint_safe(w, g) for g, w in zip(sub_params, sup_params, strict=True))


def _tuple_subhint(sub: object, sup: object) -> bool:
    sub_args, sup_args = typing.get_args(sub), typing.get_args(sup)
    if not sup_args:
        return True
    if not sub_args:
        return False if sup_args != (Any, Ellipsis) else True
    if len(sup_args) == 2 and sup_args[1] is Ellipsis:
        elems = sub_args[:1] if len(sub_args) == 2 and sub_args[1] is Ellipsis else sub_args
        return all(is_subhint_safe(a, sup_args[0]) for a in elems)
    if Ellipsis in sub_args or len(sub_args) != len(sup_args):
        return False
    return all(is_subhint_safe(a, b) for a, b in zip(sub_args, sup_args, strict=True))


def _generic_subhint(sub: object, sup: object) -> bool:
    sub_origin = typing.get_origin(sub) or sub
    sup_origin = typing.get_origin(sup) or sup
    if not (isinstance(sub_origin, type) and isinstance(sup_origin, type)):
        raise Undecidable("not comparable structurally")
    try:
        if not issubclass(sub_origin, sup_origin):
            return False
    except TypeError as exc:
        raise Undecidable(str(exc)) from exc
    sub_args, sup_args = typing.get_args(sub), typing.get_args(sup)
    if sub_origin is tuple and sub_args and len(sup_args) == 1:
        elements = sub_args[:1] if sub_args[-1] is Ellipsis else sub_args
        sub_args = (subscript(typing.Union, elements),)
    if not sub_args and sub_origin in _FIXED_ARGS:
        sub_args = _FIXED_ARGS[sub_origin]  # str is a Sequence[str], bytes a Sequence[int]
        sub_origin = sup_origin
    if not sub_args or not sup_args:
        return True  # a bare origin stands for any arguments
    variance = _VARIANCE.get(sup_origin, "")
    if len(sub_args) != len(sup_args):
        if sub_origin is cabc.Coroutine and len(sub_args) == 3 and len(sup_args) == 1:
            sub_args = sub_args[2:]  # an Awaitable of what the coroutine returns
        elif sub_origin in (cabc.Generator, cabc.AsyncGenerator) or (
            sub_origin is dict and len(sup_args) == 1
        ):
            sub_args = sub_args[: len(sup_args)]  # the yielded type / the keys
        else:
            raise Undecidable("type arguments differ in number")
    if Ellipsis in sub_args or Ellipsis in sup_args:
        raise Undecidable("variadic type arguments")
    for index, (got, want) in enumerate(zip(sub_args, sup_args, strict=True)):
        mode = variance[index] if index < len(variance) else "="
        if mode in "+=" and not is_subhint_safe(got, want):
            return False
        if mode in "-=" and not is_subhint_safe(want, got):
            return False
    return True


def _typeddict_subhint(sub: object, sup: object) -> bool:
    if not is_typeddict(sup):
        # A TypedDict is a Mapping[str, object], never a dict[...] (PEP 589).
        origin = typing.get_origin(sup) or sup
        args = typing.get_args(sup)
        return origin is cabc.Mapping and (
            not args or (_same(args[0], str) and _try_subhint(object, args[1]))
        )
    if not is_typeddict(sub):
        return False
    try:
        sub_items = typeddict_fields(sub)
        sup_items = typeddict_fields(sup)
    except Exception as exc:  # noqa: BLE001 - unresolvable field annotations
        raise Undecidable(f"TypedDict fields unresolvable: {exc}") from exc
    for key, (want, want_required) in sup_items.items():
        if key not in sub_items:
            return False
        got, got_required = sub_items[key]
        if got_required != want_required:
            return False
        # Mutable fields are invariant: each type must be a subtype of the other.
        if not (is_subhint_safe(got, want) and is_subhint_safe(want, got)):
            return False
    return True


_REQUIRED: Final = (typing.Required, typing_extensions.Required)
_NOT_REQUIRED: Final = (typing.NotRequired, typing_extensions.NotRequired)
_TRANSPARENT: Final = (typing.Annotated, typing_extensions.ReadOnly)


def typeddict_fields(td: object) -> dict[str, tuple[object, bool]]:
    """Each key of a TypedDict: (value type, required?).

    `__required_keys__` is wrong on Python 3.11 when the TypedDict's module uses
    `from __future__ import annotations` (a string "NotRequired[...]" is not seen), so
    an explicit Required/NotRequired in the resolved annotation overrides it.
    """
    required_keys: frozenset[str] = getattr(td, "__required_keys__", frozenset())
    fields: dict[str, tuple[object, bool]] = {}
    for key, hint in typing.get_type_hints(td, include_extras=True).items():
        required = key in required_keys
        while True:
            origin = typing.get_origin(hint)
            if origin in _REQUIRED or origin in _NOT_REQUIRED:
                required = origin in _REQUIRED
            elif origin not in _TRANSPARENT:
                break
            hint = typing.get_args(hint)[0]
        fields[key] = (hint, required)
    return fields


def show_hint(hint: object) -> str:
    """A hint as a person writes it: `dict[str, float]`, `TrainResult`, `None`."""
    if hint is type(None) or hint is None:
        return "None"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in _UNIONS:
        return " | ".join(show_hint(arg) for arg in args)
    if origin is cabc.Callable and args and isinstance(args[0], list):
        params = ", ".join(show_hint(a) for a in args[0])
        return f"Callable[[{params}], {show_hint(args[-1])}]"
    if origin is not None and args and origin is not typing.Annotated and origin is not Literal:
        name = getattr(origin, "__qualname__", None) or repr(origin)
        return f"{name}[{', '.join(show_hint(a) for a in args)}]"
    if isinstance(hint, type):
        return hint.__qualname__
    if isinstance(hint, typing.TypeVar):
        return hint.__name__
    if hint is Ellipsis:
        return "..."
    return repr(hint).replace("typing.", "").replace("collections.abc.", "")


def self_type_vars(hint: object, self_map: dict[object, object]) -> dict[object, object]:
    """{T: Self (or the class)} for a self annotated `T` or a cls annotated `type[T]`."""
    if typing.get_origin(hint) is type and typing.get_args(hint):
        hint = typing.get_args(hint)[0]
    if isinstance(hint, typing.TypeVar):
        return {hint: self_map.get(typing.Self, typing.Self)}
    return {}


__all__ = [
    "ResolvedHints",
    "Undecidable",
    "as_hint",
    "bearable",
    "is_subhint_safe",
    "generic_maps",
    "pick_constraint",
    "resolve_hints",
    "self_type_vars",
    "show_hint",
    "solve",
    "substitute",
    "type_vars",
    "typeddict_fields",
    "typevar_problem",
]
