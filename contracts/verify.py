"""Does a class implement a worker Protocol? The typing spec's verdict, every problem at once.

`check` returns a `VerifyReport`; `verify` returns it or raises `ContractError` with
one line per `Violation`, each naming the class, the Protocol, the member and where
the member is defined. This module holds the public API, the cache and the rules per
Protocol member (presence, kind, sync/async, the gate, base, init); the rule families
live beside it, one reason to change each: `members` (lookup, kinds, abstract Protocol
bodies, locations), `attributes` (data members and properties), `signatures` (overloads,
normalised signatures, comparing them), `shape` (call shape), `hints` (annotations and
generics), `report` (the result), `context` (what one check knows and collects).

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

import inspect
import types
import typing
from typing import Final, TypeAlias

from typing_extensions import is_protocol

from contracts.attributes import AttributeRules
from contracts.context import first_line, safe
from contracts.hints import (
    ResolvedHints,
    as_hint,
    bearable,
    callable_class,
    clear_hint_cache,
    is_subhint_safe,
    resolve_hints,
    show_hint,
    typeddict_fields,
    use_protocol_rules,
)
from contracts.init_call import InitCall
from contracts.members import (
    UNKNOWN,
    AsyncKind,
    MethodKind,
    article,
    async_kind,
    class_annotation,
    fqn,
    inherited_protocol_body,
    is_callable_hint,
    is_method,
    location,
    method_kind,
    protocol_members,
    static_member,
    vars_lookup,
)
from contracts.report import STRICTER_RULES, ContractError, Rule, VerifyReport, Violation
from contracts.shape import caller_signature, receivers, shape_problems
from contracts.signatures import SignatureRules, clear_protocol_side

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


def clear_cache() -> None:
    """Forget every cached report (after monkeypatching a class, for instance)."""
    _CACHE.clear()
    clear_protocol_side()
    clear_hint_cache()


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


def _implements(cls: type, protocol: object) -> bool:
    """A Protocol in an annotation is compared by the same rules, as the spec says."""
    return check(cls, typing.cast(type, protocol)).spec_ok


use_protocol_rules(_implements)


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


class _Placeholder:
    """Stands for an argument value when binding the builder's constructor call."""

    def __repr__(self) -> str:
        return "..."


_PLACEHOLDER: Final = _Placeholder()


class _Checker(AttributeRules, SignatureRules):
    """The member rules; data members and signatures are their own rule families."""

    def run(self, base: type | None, init_call: InitCall | None) -> VerifyReport:
        try:
            members = protocol_members(self.protocol)
        except Exception as exc:  # noqa: BLE001 - a Protocol that cannot list its members
            members = []
            self.add("", "undecidable", f"members cannot be listed: {first_line(exc)}")
        for name in members:
            self.where = ""
            try:
                self.member(name)
            except Exception as exc:  # noqa: BLE001 - every failure to introspect is reported
                self.add(name, "undecidable", f"cannot be introspected: {first_line(exc)}")
        self.where = ""
        gate = self.gate(members)
        if gate is not None and not any(
            v.rule in ("missing", "not-callable") for v in self.violations
        ):
            self.violations.insert(0, Violation(self.cls_name, self.proto_name, "", "gate", gate))
        if base is not None and not safe(lambda: issubclass(self.cls, base), False):
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
        methods only); a message when it fails, None when it passes or does not apply.

        A gate that cannot run is no verdict: beartype raising (as on a Protocol whose body
        holds a TypeVar, a member `issubclass` refuses) leaves the pair to this verifier's
        own rules, with a skipped note saying so."""
        runtime = getattr(self.protocol, "_is_runtime_protocol", False)
        methods_only = all(callable(vars_lookup(self.protocol, n)) for n in members)
        if not runtime or not methods_only or self.alias is not self.protocol:
            return None
        hint = f"beartype.door.is_bearable(cls, type[{self.proto_name}])"
        try:
            if bearable(self.cls, types.GenericAlias(type, (self.protocol,))):
                return None
        except Exception as exc:  # noqa: BLE001 - a gate that cannot run is not a verdict
            self.skipped.append(
                f"gate: {hint} cannot run ({first_line(exc)}); judged by the member rules alone"
            )
            return None
        return f"{hint} is False"

    # --- one member ----------------------------------------------------------------------

    def member(self, name: str) -> None:
        proto_raw = vars_lookup(self.protocol, name)
        if proto_raw is None or isinstance(proto_raw, property) or not is_method(proto_raw):
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
            if not (found and hint is not UNKNOWN and is_callable_hint(hint)):
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
