"""Call-time contracts: check each Protocol method call against the Protocol's types.

`enforce_calls(cls, protocol)` returns a subclass of `cls` whose Protocol methods
check their arguments and their return value (each yielded item, for async
generators) with beartype against the Protocol's annotations, and raise
`ContractCallError` naming `<Protocol>.<method>` and the class on a mismatch.
Worker groups apply it inside the actor when `call_contracts_enabled(...)` says so:
a config switch wins, else the `NEMO_RL_CALL_CONTRACTS` environment variable.

beartype checks TypedDicts only as mappings; this module adds the required keys
and the types of their values, since worker results are TypedDicts.
"""

from __future__ import annotations

import functools
import inspect
import os
import reprlib
import types
import typing
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Final, TypeVar

from beartype.door import die_if_unbearable
from typing_extensions import is_typeddict

from contracts.hints import as_hint, bearable, resolve_hints, show_hint, typeddict_fields
from contracts.members import (
    AsyncKind,
    MethodKind,
    async_kind,
    fqn,
    method_kind,
    protocol_members,
    static_member,
)
from contracts.shape import caller_signature, receivers

T = TypeVar("T")

CALL_CONTRACTS_ENV: Final = "NEMO_RL_CALL_CONTRACTS"
_TRUE: Final = frozenset({"1", "true"})
_SHORT = reprlib.Repr()
_SHORT.maxstring = 40
_SHORT.maxother = 40


def call_contracts_enabled(flag: bool | None = None) -> bool:
    """The config switch when it is set (not None), else `NEMO_RL_CALL_CONTRACTS` in {1, true}."""
    if flag is not None:
        return flag
    return os.environ.get(CALL_CONTRACTS_ENV, "").strip().lower() in _TRUE


class ContractCallError(TypeError):
    """A call to a Protocol method broke the Protocol's types."""

    def __init__(self, protocol: str, method: str, cls: str, detail: str) -> None:
        super().__init__(f"{protocol}.{method} called on {cls}: {detail}")
        self.protocol = protocol
        self.method = method
        self.cls = cls
        self.detail = detail

    def __reduce__(self) -> tuple[type[ContractCallError], tuple[str, str, str, str]]:
        return (ContractCallError, (self.protocol, self.method, self.cls, self.detail))


_ENFORCED: dict[tuple[type, type], type] = {}


def enforce_calls(cls: type[T], protocol: type) -> type[T]:
    """A subclass of `cls` whose `protocol` methods are type-checked at every call.

    The subclass keeps the name, module and qualname of `cls`. Members `cls` lacks
    are left alone (the verifier reports them). Cached per (cls, protocol).
    """
    key = (cls, protocol)
    cached = _ENFORCED.get(key)
    if cached is not None:
        return typing.cast("type[T]", cached)
    namespace: dict[str, object] = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
    }
    for name in protocol_members(protocol):
        proto: object = getattr(protocol, name, None)
        if not callable(proto):
            continue  # a data member: nothing to wrap
        try:
            raw = static_member(cls, name)
        except AttributeError:
            continue
        wrapped = _wrap_member(cls, protocol, name, raw, proto)
        if wrapped is not None:
            namespace[name] = wrapped
    enforced = types.new_class(cls.__name__, (cls,), exec_body=lambda ns: ns.update(namespace))
    _ENFORCED[key] = enforced
    return typing.cast("type[T]", enforced)


class _MethodContract:
    """The Protocol's types for one method, mapped onto the implementation's parameters."""

    def __init__(
        self,
        protocol: str,
        method: str,
        cls: str,
        impl_sig: inspect.Signature,
        params: dict[str, object],
        result: object,
        result_is_yield: bool,
    ) -> None:
        self.protocol = protocol
        self.method = method
        self.cls = cls
        self.impl_sig = impl_sig
        self.params = params
        self.result = result
        self.result_is_yield = result_is_yield

    def fail(self, detail: str) -> ContractCallError:
        return ContractCallError(self.protocol, self.method, self.cls, detail)

    def check_args(self, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        if not self.params:
            return
        try:
            bound = self.impl_sig.bind(*args, **kwargs)
        except TypeError:
            return  # the call itself raises the usual TypeError
        for name, hint in self.params.items():
            if name in bound.arguments:
                problem = value_problem(bound.arguments[name], hint)
                if problem is not None:
                    raise self.fail(f"parameter {name!r} {problem}")

    def check_result(self, value: object) -> None:
        if self.result is _UNCHECKED:
            return
        problem = value_problem(value, self.result)
        if problem is not None:
            what = "yielded" if self.result_is_yield else "returned"
            raise self.fail(f"{what} value {problem}")


_UNCHECKED: Final = object()


def _wrap_member(cls: type, protocol: type, name: str, raw: object, proto: object) -> object | None:
    kind: MethodKind = method_kind(raw)
    impl = getattr(raw, "__func__", raw) if kind != "instance method" else raw
    if not callable(impl):
        return None
    proto_kind = method_kind(static_member(protocol, name))
    try:
        proto_sig = caller_signature(proto, proto_kind)
        impl_sig = inspect.signature(impl)
    except (TypeError, ValueError):
        return None
    visible = caller_signature(getattr(cls, name), kind)
    if proto_sig is None or visible is None:
        return None
    hints, _unresolved = resolve_hints(proto)  # unresolved ones are the verifier's to report
    params = {
        receiver.name: hints[param.name]
        for param, receiver in receivers(proto_sig, visible)
        if param.name in hints and receiver.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    }
    result: object = hints.get("return", _UNCHECKED)
    proto_async: AsyncKind = async_kind(proto)
    result_is_yield = proto_async == "async generator function"
    if result_is_yield and result is not _UNCHECKED:
        args = typing.get_args(result)
        result = args[0] if args else _UNCHECKED
    contract = _MethodContract(
        protocol.__qualname__, name, fqn(cls), impl_sig, params, result, result_is_yield
    )
    wrapper = _wrapper(typing.cast("Callable[..., object]", impl), async_kind(impl), contract)
    if kind == "staticmethod":
        return staticmethod(wrapper)
    if kind == "classmethod":
        return classmethod(wrapper)
    return wrapper


def _wrapper(
    impl: Callable[..., object], kind: AsyncKind, contract: _MethodContract
) -> Callable[..., object]:
    """A wrapper of the same sync/async kind as `impl`, so Ray and the verifier see no change."""
    if kind == "async generator function":
        stream = typing.cast("Callable[..., AsyncGenerator[object, None]]", impl)

        @functools.wraps(impl)
        async def checked_stream(*args: object, **kwargs: object) -> AsyncGenerator[object, None]:
            contract.check_args(args, kwargs)
            inner = stream(*args, **kwargs)
            try:
                async for item in inner:
                    contract.check_result(item)
                    yield item
            finally:
                await inner.aclose()  # a consumer that stops early stops the engine's stream too

        return checked_stream
    if kind == "coroutine function (async def)":
        coroutine = typing.cast("Callable[..., typing.Awaitable[object]]", impl)

        @functools.wraps(impl)
        async def checked_coroutine(*args: object, **kwargs: object) -> object:
            contract.check_args(args, kwargs)
            result = await coroutine(*args, **kwargs)
            contract.check_result(result)
            return result

        return checked_coroutine

    @functools.wraps(impl)
    def checked(*args: object, **kwargs: object) -> object:
        contract.check_args(args, kwargs)
        result = impl(*args, **kwargs)
        contract.check_result(result)
        return result

    return checked


def value_problem(value: object, hint: object) -> str | None:
    """Why `value` does not satisfy `hint` (one phrase), or None when it does."""
    if is_typeddict(hint):
        return _typeddict_problem(value, hint)
    try:
        if bearable(value, hint):
            return None
    except Exception:  # noqa: BLE001 - a hint beartype cannot check is not a violation
        return None
    reason = ""
    try:
        die_if_unbearable(value, as_hint(hint))
    except Exception as exc:  # noqa: BLE001 - beartype's violation carries the reason
        reason = str(exc).partition(", as ")[2].rstrip(".")
    return f"= {_SHORT.repr(value)} is not {show_hint(hint)}" + (f" ({reason})" if reason else "")


def _typeddict_problem(value: object, hint: object) -> str | None:
    name = show_hint(hint)
    if not isinstance(value, Mapping):
        return f"= {_SHORT.repr(value)} is not {name} (a {type(value).__name__}, not a mapping)"
    try:
        fields = typeddict_fields(hint)
    except Exception:  # noqa: BLE001 - unresolvable fields are left unchecked
        return None
    missing = [key for key, (_, required) in fields.items() if required and key not in value]
    if missing:
        keys = ", ".join(map(repr, missing))
        return f"= {_SHORT.repr(value)} is not {name} (missing key(s) {keys})"
    for key, (field, _) in fields.items():
        if key in value:
            problem = value_problem(value[key], field)
            if problem is not None:
                return f"is not {name}: key {key!r} {problem}"
    return None
