"""Does a class implement a worker Protocol? The typing spec's verdict, every problem at once.

`check` returns a `VerifyReport`; `verify` returns it or raises `ContractError` with
one line per `Violation`, each naming the class, the Protocol, the member and where
the member is defined. This module holds the rules per Protocol member; the rule
families live beside it: `members` (lookup, kinds, abstract Protocol bodies),
`shape` (call shape), `hints` (annotations and generics), `report` (the result).

Rules for each Protocol member, as mypy and pyrefly apply the typing spec:
  missing (including a member only an abstract Protocol body provides), attribute
  (data members and properties: presence, settable, class variable, type),
  not-callable, kind (a Protocol class/static method needs one), shape (every call
  the Protocol accepts is accepted; each overload), annotation (parameters
  contravariant, returns covariant; Self, TypeVars, TypedDicts, nested Protocols).
Named stricter rules (see `report.STRICTER_RULES` and the guide): async, gate,
base, init. What the class alone cannot settle is reported as undecidable.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from beartype.door import is_bearable
from typing_extensions import is_protocol

from contracts.hints import (
    ResolvedHints,
    Undecidable,
    as_hint,
    bearable,
    callable_class,
    generic_maps,
    is_subhint_safe,
    pick_constraint,
    resolve_hints,
    show_hint,
    solve,
    subscript,
    substitute,
    type_vars,
    typeddict_fields,
    typevar_problem,
)
from contracts.init_call import InitCall
from contracts.members import (
    UNKNOWN,
    AsyncKind,
    MethodKind,
    article,
    assigned_in_methods,
    assigned_type,
    async_kind,
    class_annotation,
    fqn,
    function_of,
    inherited_protocol_body,
    location,
    method_kind,
    owner_of,
    protocol_members,
    static_member,
    vars_lookup,
)
from contracts.report import STRICTER_RULES, ContractError, Rule, VerifyReport, Violation
from contracts.shape import (
    caller_signature,
    expand_unpacked_kwargs,
    gradual_problems,
    is_gradual,
    old_style_positional_only,
    receivers,
    shape_problems,
)

__all__ = [
    "STRICTER_RULES",
    "AsyncKind",
    "ContractError",
    "MethodKind",
    "ResolvedHints",
    "Rule",
    "VerifyReport",
    "Violation",
    "as_hint",
    "async_kind",
    "bearable",
    "caller_signature",
    "check",
    "clear_cache",
    "fqn",
    "is_subhint_safe",
    "method_kind",
    "protocol_members",
    "receivers",
    "resolve_hints",
    "shape_problems",
    "show_hint",
    "static_member",
    "typeddict_fields",
    "verify",
    "vars_lookup",
]

CacheKey: TypeAlias = tuple[object, object, "type | None", "InitCall | None"]
_CACHE: dict[CacheKey, VerifyReport] = {}
# The Protocol side of a member is the same for every class checked against it:
# (Protocol, member) -> (signatures with Self unbound, skipped notes, undecidable lines).
_PROTOCOL_SIDE: dict[tuple[object, str], tuple[object, list[str], list[Violation]]] = {}


def clear_cache() -> None:
    """Forget every cached report (after monkeypatching a class, for instance)."""
    _CACHE.clear()
    _PROTOCOL_SIDE.clear()


def check(
    cls: type,
    protocol: type,
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
    init_args: InitCall | None = None,
) -> VerifyReport:
    """Check `cls` against `protocol` and return the report; never raises for a bad class.

    `protocol` may be a specialised generic Protocol (`Box[int]`). `init_call`
    (canonical) is the constructor call the worker builder will make; `init_args` is
    accepted as an alias. Results are cached per (cls, protocol, base, init_call); see
    `clear_cache`. Raises `TypeError` only for a misuse: `cls` not a class or
    `protocol` not a Protocol.
    """
    call = _one_init_call(init_call, init_args)
    key: CacheKey = (cls, protocol, base, call)
    try:
        report = _CACHE.get(key)
    except TypeError:  # an unhashable argument: checked below, not cached
        return _Checker(cls, protocol).run(base, call)
    if report is None:
        report = _CACHE[key] = _Checker(cls, protocol).run(base, call)
    return report


def verify(
    cls: type,
    protocol: type,
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
    init_args: InitCall | None = None,
) -> VerifyReport:
    """Like `check`, but raise `ContractError` listing every violation if there is any."""
    report = check(cls, protocol, base=base, init_call=init_call, init_args=init_args)
    report.raise_if_failed()
    return report


def _one_init_call(init_call: InitCall | None, init_args: InitCall | None) -> InitCall | None:
    if init_call is not None and init_args is not None and init_call != init_args:
        raise TypeError("pass init_call or its alias init_args, not both")
    return init_call if init_call is not None else init_args


# ---------------------------------------------------------------------------------------

_EMPTY: Final = inspect.Parameter.empty
_SELF: Final = (typing.Self,)
_CLASSVAR: Final = (typing.ClassVar,)
_COROUTINE: Final = "coroutine function (async def)"


class _Placeholder:
    """Stands for an argument value when binding the builder's constructor call."""

    def __repr__(self) -> str:
        return "..."


_PLACEHOLDER: Final = _Placeholder()


@dataclass(frozen=True)
class _Callable:
    """One signature of a member as an instance exposes it, annotations resolved."""

    sig: inspect.Signature
    tvars: frozenset[typing.TypeVar]  # method-scoped type variables


class _Checker:
    def __init__(self, cls: type, protocol: object) -> None:
        if not isinstance(cls, type):
            raise TypeError(f"check() needs a class, got {cls!r}")
        origin = typing.get_origin(protocol) or protocol
        if not (isinstance(origin, type) and is_protocol(origin)):
            raise TypeError(f"check() needs a typing.Protocol, got {protocol!r}")
        self.cls = cls
        self.protocol = origin
        self.alias = protocol
        self.cls_name = _safe(lambda: fqn(cls), repr(cls))
        self.proto_name = origin.__qualname__ if protocol is origin else show_hint(protocol)
        # An unspecialised generic Protocol reads as P[Any, ...], as in the checkers.
        self.class_maps = _safe(lambda: generic_maps(origin, typing.get_args(protocol)), {})
        self.impl_maps = _safe(lambda: generic_maps(cls), {})
        self.self_map: dict[object, object] = {s: cls for s in _SELF}
        self.violations: list[Violation] = []
        self.undecidable: list[Violation] = []
        self.skipped: list[str] = []
        self.where = ""

    def add(self, member: str, rule: Rule, message: str) -> None:
        line = Violation(self.cls_name, self.proto_name, member, rule, message, self.where)
        (self.undecidable if rule == "undecidable" else self.violations).append(line)

    def run(self, base: type | None, init_call: InitCall | None) -> VerifyReport:
        try:
            members = protocol_members(self.protocol)
        except Exception as exc:  # noqa: BLE001 - a Protocol that cannot list its members
            members = []
            self.add("", "undecidable", f"members cannot be listed: {_first_line(exc)}")
        for name in members:
            self.where = ""
            try:
                self.member(name)
            except Exception as exc:  # noqa: BLE001 - every failure to introspect is reported
                self.add(name, "undecidable", f"cannot be introspected: {_first_line(exc)}")
        self.where = ""
        gate = self.gate(members)
        if gate is not None and not any(
            v.rule in ("missing", "not-callable") for v in self.violations
        ):
            self.violations.insert(0, Violation(self.cls_name, self.proto_name, "", "gate", gate))
        if base is not None and not _safe(lambda: issubclass(self.cls, base), False):
            self.add("", "base", f"not a subclass of {fqn(base)}")
        if init_call is not None:
            self.init(init_call)
        return VerifyReport(
            self.cls_name,
            self.proto_name,
            tuple(self.violations),
            tuple(self.skipped),
            tuple(self.undecidable),
        )

    def gate(self, members: list[str]) -> str | None:
        """beartype's presence check where it applies (a runtime-checkable Protocol of
        methods only); a message when it fails, None when it passes or does not apply."""
        runtime = getattr(self.protocol, "_is_runtime_protocol", False)
        methods_only = all(callable(vars_lookup(self.protocol, n)) for n in members)
        if not runtime or not methods_only or self.alias is not self.protocol:
            return None
        hint = f"beartype.door.is_bearable(cls, type[{self.proto_name}])"
        try:
            if bearable(self.cls, types.GenericAlias(type, (self.protocol,))):
                return None
        except Exception as exc:  # noqa: BLE001 - any failure of the gate is reported, not raised
            return f"{hint} cannot run: {_first_line(exc)}"
        return f"{hint} is False"

    # --- one member ----------------------------------------------------------------------

    def member(self, name: str) -> None:
        proto_raw = vars_lookup(self.protocol, name)
        if proto_raw is None or isinstance(proto_raw, property) or not _is_method(proto_raw):
            self.attribute(name, proto_raw)
            return
        owner = inherited_protocol_body(self.cls, name)
        if owner is not None:
            self.where = location(static_member(self.cls, name))
            kind = "Protocol" if is_protocol(owner) else "class"
            self.add(
                name,
                "missing",
                f"missing: only the abstract body in {kind} {owner.__qualname__} provides it "
                "(a call would return None)",
            )
            return
        try:
            impl_raw = static_member(self.cls, name)
        except AttributeError:
            found, hint = class_annotation(self.cls, name)
            if not (found and hint is not UNKNOWN and _is_callable_hint(hint)):
                self.add(name, "missing", "missing")
                return
            # An attribute annotated `Callable[...]`: called through the instance as is.
            impl_raw = vars(callable_class(hint))["__call__"]
        self.where = location(impl_raw)
        impl = impl_raw.__func__ if isinstance(impl_raw, staticmethod) else getattr(self.cls, name)
        if not callable(impl):
            self.add(name, "not-callable", f"not callable (found {type(impl_raw).__name__})")
            return
        proto_kind, impl_kind = method_kind(proto_raw), method_kind(impl_raw)
        if proto_kind != "instance method" and impl_kind == "instance method":
            self.add(
                name, "kind", f"{article(impl_kind)}, the Protocol declares {article(proto_kind)}"
            )
        proto = getattr(self.protocol, name)
        proto_async, impl_async = async_kind(proto), async_kind(impl)
        if proto_async != impl_async:
            self.add(
                name,
                "async",
                f"{article(impl_async)}, the Protocol declares {article(proto_async)} "
                "(stricter than the spec: Ray runs a method by its function kind)",
            )
        proto_sigs = self.protocol_signatures(proto, proto_kind, name)
        impl_sigs = self.signatures(impl, impl_kind, self.cls, name, self.cls_name)
        if proto_sigs is None or impl_sigs is None:
            return
        if not impl_sigs:
            self.add(name, "shape", "call shape: takes no parameter to receive the instance")
            return
        for proto_sig in proto_sigs:
            self.one_signature(name, proto_sig, impl_sigs, overloaded=len(proto_sigs) > 1)

    def one_signature(
        self, name: str, proto: _Callable, impls: list[_Callable], *, overloaded: bool
    ) -> None:
        """Some implementation signature (overload) must accept every call of `proto`."""
        best: list[tuple[Rule, str]] | None = None
        for impl in impls:
            problems = self.compare(name, proto, impl)
            if not problems:
                return
            if best is None or len(problems) < len(best):
                best = problems
        assert best is not None
        shown = f" (overload {_show_sig(proto.sig)})" if overloaded else ""
        if len(impls) > 1:
            self.add(
                name, "shape", f"no overload accepts the Protocol's call {_show_sig(proto.sig)}"
            )
            return
        for rule, text in best:
            self.add(name, rule, f"{text}{shown}")

    def compare(self, name: str, proto: _Callable, impl: _Callable) -> list[tuple[Rule, str]]:
        problems: list[tuple[Rule, str]] = []
        gradual = is_gradual(proto.sig)
        shape = (
            gradual_problems(proto.sig, impl.sig)
            if gradual
            else shape_problems(proto.sig, impl.sig)
        )
        problems += [("shape", f"call shape: {p}") for p in shape]
        # The implementation's own type variables take what the Protocol's caller passes.
        binding: dict[object, object] = {}
        pairs = receivers(proto.sig, impl.sig)
        if impl.tvars:
            for param, receiver in pairs:
                if param.annotation is not _EMPTY and receiver.annotation is not _EMPTY:
                    solve(receiver.annotation, param.annotation, set(impl.tvars), binding)
            for var, value in list(binding.items()):
                assert isinstance(var, typing.TypeVar)
                why = typevar_problem(var, value)
                if why is not None:
                    problems.append(("annotation", f"annotation: {why}"))
                binding[var] = pick_constraint(var, value)
            for var in impl.tvars:
                binding.setdefault(var, Any)
        for param, receiver in pairs:
            want, got = param.annotation, substitute(receiver.annotation, binding)
            if want is _EMPTY or got is _EMPTY or (gradual and param.kind in _VAR):
                continue
            if self.subhint(name, want, got) is False:
                problems.append(
                    (
                        "annotation",
                        f"annotation: parameter {receiver.name!r} is {show_hint(got)}, "
                        f"which does not accept the Protocol's {show_hint(want)}",
                    )
                )
        want, got = proto.sig.return_annotation, substitute(impl.sig.return_annotation, binding)
        if want is not _EMPTY and got is not _EMPTY and self.subhint(name, got, want) is False:
            problems.append(
                (
                    "annotation",
                    f"annotation: returns {show_hint(got)}, "
                    f"which is not a {show_hint(want)} (the Protocol's return)",
                )
            )
        return problems

    def protocol_signatures(
        self, proto: object, kind: MethodKind, name: str
    ) -> list[_Callable] | None:
        """`signatures` of the Protocol's member, computed once per Protocol; `Self` is
        bound to the class checked afterwards."""
        key = (self.alias, name)
        cached = _PROTOCOL_SIDE.get(key)
        if cached is None:
            skipped, undecidable = len(self.skipped), len(self.undecidable)
            mapping = self.self_map
            self.self_map = {}
            try:
                found = self.signatures(proto, kind, self.protocol, name, self.proto_name)
            finally:
                self.self_map = mapping
            cached = _PROTOCOL_SIDE[key] = (
                found,
                self.skipped[skipped:],
                self.undecidable[undecidable:],
            )
        else:
            self.skipped.extend(cached[1])
            self.undecidable.extend(
                dataclasses.replace(v, cls=self.cls_name) for v in cached[2]
            )
        found = typing.cast("list[_Callable] | None", cached[0])
        if not found:
            return found
        return [_bind_self(c, self.self_map) for c in found]

    def signatures(
        self, func: object, kind: MethodKind, owner: type, name: str, owner_name: str
    ) -> list[_Callable] | None:
        """Each signature of `func` (its overloads, or itself), normalised; [] when self
        cannot bind, None when unreadable (reported as skipped)."""
        target = function_of(func) or func
        overloads: list[object] = []
        if isinstance(target, types.FunctionType):
            overloads = list(_safe(lambda: typing.get_overloads(target), []))
        found: list[_Callable] = []
        # Overloads are plain functions: a classmethod's still take cls, dropped like self.
        one_kind: MethodKind = kind
        if overloads and kind == "classmethod":
            one_kind = "instance method"
        for one in overloads or [func]:
            try:
                sig = caller_signature(one, one_kind)
            except (TypeError, ValueError) as exc:
                side = "the Protocol's" if owner is self.protocol else "its"
                self.add(name, "undecidable", f"{side} signature is unreadable ({exc})")
                return None
            if sig is None:
                return []
            hints = self.hints(name, resolve_hints(one), owner_name)
            found.append(self.normalise(sig, hints, one, owner, name))
        return found

    def type_args(self, owner: type, name: str) -> dict[object, object]:
        """How the class-level type variables of the class defining `owner.name` are bound."""
        maps = self.class_maps if owner is self.protocol else self.impl_maps
        defining = _safe(lambda: owner_of(owner, name), owner)
        return dict(maps.get(defining, {}))

    def normalise(
        self,
        sig: inspect.Signature,
        hints: dict[str, object],
        func: object,
        owner: type,
        name: str,
    ) -> _Callable:
        mapping = {**self.self_map, **self.type_args(owner, name)}
        # `def m(self: T) -> T`: a type variable on self stands for the class, like Self.
        for key, hint in hints.items():
            if key != "return" and key not in sig.parameters:
                mapping.update(_self_type_vars(hint, self.self_map))
        params = [
            p.replace(annotation=substitute(hints[p.name], mapping) if p.name in hints else _EMPTY)
            for p in sig.parameters.values()
        ]
        ret = substitute(hints["return"], mapping) if "return" in hints else _EMPTY
        if ret is not _EMPTY and async_kind(func) == _COROUTINE:
            ret = subscript(cabc.Coroutine, (Any, Any, ret))
        out = sig.replace(parameters=params, return_annotation=ret)
        qualname = getattr(function_of(func), "__qualname__", "")
        out = old_style_positional_only(out, qualname.rsplit(".", 2)[-2] if "." in qualname else "")
        out = expand_unpacked_kwargs(out)
        tvars: set[typing.TypeVar] = set()
        for p in out.parameters.values():
            tvars |= type_vars(p.annotation)
        tvars |= type_vars(out.return_annotation)
        return _Callable(out, frozenset(tvars))

    # --- data members and properties ----------------------------------------------------

    def attribute(self, name: str, proto_raw: object) -> None:
        want, settable, classvar = self.declared(name, proto_raw)
        owner = inherited_protocol_body(self.cls, name) if proto_raw is not None else None
        if owner is None and proto_raw is None and not is_protocol(self.cls):
            owner = self.declared_only_in_protocol(name)
        if owner is not None:
            self.add(
                name,
                "missing",
                f"missing: only Protocol {owner.__qualname__} declares it, nothing sets it",
            )
            return
        impl_raw = vars_lookup(self.cls, name)
        if impl_raw is not None and _safe(lambda: is_protocol(owner_of(self.cls, name)), False):
            impl_raw = impl_raw if not is_protocol(self.cls) else impl_raw
        found, got = class_annotation(self.cls, name)
        got_classvar = typing.get_origin(got) in _CLASSVAR
        if got_classvar:
            args = typing.get_args(got)
            got = args[0] if args else Any
        if isinstance(impl_raw, property):
            self.where = location(impl_raw)
            got_settable = impl_raw.fset is not None
            got = self.property_type(name, impl_raw)
        elif impl_raw is not None and _is_method(impl_raw) and not found:
            self.where = location(impl_raw)
            self.add(name, "attribute", "a method, the Protocol declares a data attribute")
            return
        elif impl_raw is not None or found:
            got_settable = (not got_classvar or classvar) and not _read_only_fields(self.cls)
            if not found:
                got = type(impl_raw) if type(impl_raw) in _INFERRED else UNKNOWN
        else:
            assigned = assigned_in_methods(self.cls, name)
            if assigned is None:
                self.add(name, "missing", "missing")
                return
            self.where = assigned
            if classvar:
                self.add(
                    name, "attribute", "an instance variable, the Protocol declares a ClassVar"
                )
                return
            got = assigned_type(self.cls, name)
            if got is UNKNOWN:
                if want is not Any and want is not object:
                    self.add(
                        name,
                        "undecidable",
                        f"set on the instance in a method; its type cannot be read from the "
                        f"class (the Protocol declares {show_hint(want)})",
                    )
                return
            got_settable = True
        if classvar and not got_classvar:
            self.add(name, "attribute", "an instance variable, the Protocol declares a ClassVar")
            return
        if settable and not got_settable:
            self.add(name, "attribute", "read-only, the Protocol declares a settable attribute")
            return
        if got is UNKNOWN or want is UNKNOWN:
            if want is not UNKNOWN and want is not Any and want is not object:
                self.add(name, "undecidable", "its type cannot be read from the class")
            return
        got = substitute(got, {**self.self_map, **self.type_args(self.cls, name)})
        ok = self.subhint(name, got, want)
        if ok is not False and settable:
            # Settable: what the Protocol's users assign must fit, so the type is invariant.
            stored = self.setter_type(name, impl_raw) if isinstance(impl_raw, property) else got
            ok = stored is UNKNOWN or self.subhint(name, want, stored)
        if ok is False:
            what = "settable attribute" if settable else "attribute"
            self.add(
                name,
                "annotation",
                f"annotation: {show_hint(got)}, the Protocol's {what} is {show_hint(want)}",
            )

    def declared(self, name: str, proto_raw: object) -> tuple[object, bool, bool]:
        """(type, settable, ClassVar) of the Protocol's data member or property."""
        mapping = {**self.self_map, **self.type_args(self.protocol, name)}
        if isinstance(proto_raw, property):
            hint = self.property_type(name, proto_raw, protocol=True)
            return substitute(hint, mapping), proto_raw.fset is not None, False
        found, hint = class_annotation(self.protocol, name)
        if not found or hint is UNKNOWN:
            return UNKNOWN, True, False
        classvar = typing.get_origin(hint) in _CLASSVAR
        if classvar:
            args = typing.get_args(hint)
            hint = args[0] if args else Any
        # A ClassVar is settable through the class, so it is invariant as well.
        return substitute(hint, mapping), True, classvar

    def declared_only_in_protocol(self, name: str) -> type | None:
        """The Protocol a subclass inherits the bare declaration `name: T` from, when no
        class body or method of the subclass sets it (mypy: an abstract attribute)."""
        if self.protocol not in self.cls.__mro__:
            return None
        for klass in self.cls.__mro__:
            if is_protocol(klass):
                continue
            if name in vars(klass) or name in vars(klass).get("__annotations__", {}):
                return None
        if assigned_in_methods(self.cls, name) is not None:
            return None
        return self.protocol

    def setter_type(self, name: str, prop: property) -> object:
        if prop.fset is None:
            return UNKNOWN
        hints = self.hints(name, resolve_hints(prop.fset), self.cls_name)
        params = [k for k in hints if k != "return"]
        return hints[params[-1]] if params else UNKNOWN

    def property_type(self, name: str, prop: property, *, protocol: bool = False) -> object:
        hints = self.hints(
            name,
            resolve_hints(prop.fget),
            self.proto_name if protocol else self.cls_name,
        )
        mapping: dict[object, object] = {}
        for key, hint in hints.items():
            if key != "return":  # the getter's only parameter is self
                mapping.update(_self_type_vars(hint, {}))
        return substitute(hints.get("return", UNKNOWN), mapping)

    # --- helpers -------------------------------------------------------------------------

    def hints(self, name: str, resolved: ResolvedHints, owner: str) -> dict[str, object]:
        hints, unresolved = resolved
        for key, error in unresolved:
            what = "return" if key == "return" else f"parameter {key!r}"
            self.skipped.append(
                f"{owner}.{name}: annotation of {what} could not be resolved ({error}); not checked"
            )
        return hints

    def subhint(self, name: str, sub: object, sup: object) -> bool | None:
        try:
            return is_subhint_safe(sub, sup)
        except Undecidable as exc:
            self.skipped.append(
                f"{self.proto_name}.{name}: cannot decide whether {show_hint(sub)} "
                f"is a {show_hint(sup)} ({exc}); not checked"
            )
            return None
        except RecursionError:
            self.add(
                name,
                "undecidable",
                f"comparing {show_hint(sub)} with {show_hint(sup)} recursed too deep",
            )
            return None

    def init(self, call: InitCall) -> None:
        shown = ", ".join([*call.positional, *(f"{k}=..." for k in call.keywords)])
        try:
            sig = inspect.signature(self.cls)
        except (TypeError, ValueError) as exc:
            self.add("", "undecidable", f"constructor signature is unreadable ({exc})")
            return
        try:
            sig.bind(
                *(_PLACEHOLDER for _ in call.positional),
                **dict.fromkeys(call.keywords, _PLACEHOLDER),
            )
        except TypeError as exc:
            self.add("", "init", f"constructor cannot take {self.cls.__name__}({shown}): {exc}")


_VAR: Final = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
# Class values whose type mypy infers as the value's class.
_INFERRED: Final = frozenset({int, float, complex, str, bytes, bool, list, dict, set, tuple})


def _self_type_vars(hint: object, self_map: dict[object, object]) -> dict[object, object]:
    """{T: Self (or the class)} for a self annotated `T` or a cls annotated `type[T]`."""
    if typing.get_origin(hint) is type and typing.get_args(hint):
        hint = typing.get_args(hint)[0]
    if isinstance(hint, typing.TypeVar):
        return {hint: self_map.get(typing.Self, typing.Self)}
    return {}


def _bind_self(call: _Callable, mapping: dict[object, object]) -> _Callable:
    params = [
        p.replace(annotation=substitute(p.annotation, mapping))
        for p in call.sig.parameters.values()
    ]
    ret = substitute(call.sig.return_annotation, mapping)
    return _Callable(call.sig.replace(parameters=params, return_annotation=ret), call.tvars)


def _read_only_fields(cls: type) -> bool:
    """A NamedTuple's or frozen dataclass's fields cannot be assigned on an instance."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and getattr(params, "frozen", False):
        return True
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _is_method(raw: object) -> bool:
    if isinstance(raw, (staticmethod, classmethod, types.FunctionType)):
        return True
    return callable(raw) and not isinstance(raw, type)


def _is_callable_hint(hint: object) -> bool:
    return (typing.get_origin(hint) or hint) is cabc.Callable


def _show_sig(sig: inspect.Signature) -> str:
    params = [
        p.replace(annotation=show_hint(p.annotation)) if p.annotation is not _EMPTY else p
        for p in sig.parameters.values()
    ]
    ret = sig.return_annotation
    shown = sig.replace(parameters=params, return_annotation=_EMPTY)
    return f"{shown}" + (f" -> {show_hint(ret)}" if ret is not _EMPTY else "")


def _safe(func: typing.Callable[[], Any], default: Any) -> Any:  # noqa: ANN401
    try:
        return func()
    except Exception:  # noqa: BLE001 - introspection of a hostile object
        return default


def _first_line(exc: BaseException) -> str:
    # beartype wraps the interesting TypeError; its own message spans many lines.
    root = exc.__cause__ if exc.__cause__ is not None else exc
    text = str(root).strip().splitlines()
    return f"{type(root).__name__}: {text[0] if text else ''}"


_UNUSED: Final = (is_bearable, Literal)
