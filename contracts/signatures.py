"""Signature rules: each Protocol method's signatures (its overloads) as an instance
exposes them, normalised, and whether some signature of the class accepts each one.

The Protocol side of a member is the same for every class checked against it, so it
is computed once per (Protocol, member) and `Self` is bound to each class afterwards.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Final

from contracts.context import CheckContext, safe
from contracts.hints import (
    pick_constraint,
    resolve_hints,
    self_type_vars,
    show_hint,
    solve,
    subscript,
    substitute,
    type_vars,
    typevar_problem,
)
from contracts.members import (
    MethodKind,
    async_kind,
    body_type_variables,
    declared_overloads,
    function_of,
    is_overload_placeholder,
)
from contracts.report import Rule, Violation
from contracts.shape import (
    caller_signature,
    expand_unpacked_kwargs,
    gradual_problems,
    is_gradual,
    old_style_positional_only,
    receivers,
    shape_problems,
    unpacks_typeddict,
)

_EMPTY: Final = inspect.Parameter.empty
_VAR: Final = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_COROUTINE: Final = "coroutine function (async def)"

# (Protocol, member) -> (signatures with Self unbound, skipped notes, undecidable lines).
_PROTOCOL_SIDE: dict[tuple[object, str], tuple[object, list[str], list[Violation]]] = {}


def clear_protocol_side() -> None:
    _PROTOCOL_SIDE.clear()


@dataclass(frozen=True)
class ExposedCall:
    """One signature of a member as an instance exposes it, annotations resolved."""

    sig: inspect.Signature
    tvars: frozenset[typing.TypeVar]  # method-scoped type variables
    # `**kwargs: Unpack[TD]` spelled out as keywords: callers may still pass more keys,
    # since a TypedDict is open (a subclass instance can be unpacked into the call).
    open_kwargs: bool = False


class SignatureRules(CheckContext):
    def one_signature(
        self, name: str, proto: ExposedCall, impls: list[ExposedCall], *, overloaded: bool
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

    def compare(self, name: str, proto: ExposedCall, impl: ExposedCall) -> list[tuple[Rule, str]]:
        problems: list[tuple[Rule, str]] = []
        gradual = is_gradual(proto.sig)
        shape = (
            gradual_problems(proto.sig, impl.sig)
            if gradual
            else shape_problems(proto.sig, impl.sig)
        )
        problems += [("shape", f"call shape: {p}") for p in shape]
        if proto.open_kwargs and not impl.open_kwargs and not _takes_var_keyword(impl.sig):
            problems.append(
                (
                    "shape",
                    "call shape: takes no **kwargs, but the Protocol's **kwargs: Unpack[...] "
                    "lets callers pass keys beyond its TypedDict (a TypedDict is open)",
                )
            )
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
    ) -> list[ExposedCall] | None:
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
            self.undecidable.extend(dataclasses.replace(v, cls=self.cls_name) for v in cached[2])
        found = typing.cast("list[ExposedCall] | None", cached[0])
        if not found:
            return found
        return [_bind_self(c, self.self_map) for c in found]

    def signatures(
        self, func: object, kind: MethodKind, owner: type, name: str, owner_name: str
    ) -> list[ExposedCall] | None:
        """Each signature of `func` (its overloads, or itself), normalised; [] when self
        cannot bind, None when unreadable (reported as skipped)."""
        target = function_of(func) or func
        overloads: list[object] = []
        if is_overload_placeholder(target):
            # Declared only by `@overload` (usual in Protocols and stubs): the attribute
            # is typing's shared placeholder, so the overloads are found by owner and name.
            overloads = list(safe(lambda: declared_overloads(owner, name), []))
            if not overloads:
                side = "the Protocol's" if owner is self.protocol else "its"
                self.add(name, "undecidable", f"{side} @overload signatures cannot be found")
                return None
        elif isinstance(target, types.FunctionType):
            overloads = list(safe(lambda: typing.get_overloads(target), []))
        found: list[ExposedCall] = []
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
            hints = self.hints(
                name,
                resolve_hints(one, lambda: safe(lambda: body_type_variables(owner, name), {})),
                owner_name,
            )
            found.append(self.normalise(sig, hints, one, owner, name))
        return found

    def normalise(
        self,
        sig: inspect.Signature,
        hints: dict[str, object],
        func: object,
        owner: type,
        name: str,
    ) -> ExposedCall:
        mapping = {**self.self_map, **self.type_args(owner, name)}
        # `def m(self: T) -> T`: a type variable on self stands for the class, like Self.
        for key, hint in hints.items():
            if key != "return" and key not in sig.parameters:
                mapping.update(self_type_vars(hint, self.self_map))
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
        open_kwargs = unpacks_typeddict(out)
        out = expand_unpacked_kwargs(out)
        tvars: set[typing.TypeVar] = set()
        for p in out.parameters.values():
            tvars |= type_vars(p.annotation)
        tvars |= type_vars(out.return_annotation)
        return ExposedCall(out, frozenset(tvars), open_kwargs)

    # --- data members and properties ----------------------------------------------------


def _bind_self(call: ExposedCall, mapping: dict[object, object]) -> ExposedCall:
    params = [
        p.replace(annotation=substitute(p.annotation, mapping))
        for p in call.sig.parameters.values()
    ]
    ret = substitute(call.sig.return_annotation, mapping)
    return ExposedCall(
        call.sig.replace(parameters=params, return_annotation=ret), call.tvars, call.open_kwargs
    )


def _takes_var_keyword(sig: inspect.Signature) -> bool:
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def _show_sig(sig: inspect.Signature) -> str:
    params = [
        p.replace(annotation=show_hint(p.annotation)) if p.annotation is not _EMPTY else p
        for p in sig.parameters.values()
    ]
    ret = sig.return_annotation
    shown = sig.replace(parameters=params, return_annotation=_EMPTY)
    return f"{shown}" + (f" -> {show_hint(ret)}" if ret is not _EMPTY else "")
