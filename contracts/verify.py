"""Runtime verifier: does a class implement a worker Protocol? Every problem, at once.

`check` returns a `VerifyReport`; `verify` returns it or raises `ContractError` with
one line per `Violation`, each naming the class, the Protocol and the member. The
report holds names (strings), not classes, so it can travel back from a check run
in the worker's own Python environment to a driver that never imports the class.

Rules, in the order they are checked for each Protocol member:
  missing, not-callable, kind (instance/static/class method), async (coroutine
  function / async generator function / plain), shape (every call the Protocol
  accepts is accepted), annotation (parameters contravariant, returns covariant).
Class-level rules: gate (beartype's `is_bearable(cls, type[P])`), base, init.

The gate is a yes/no presence check; when it says no and a "missing" or
"not-callable" line already names the reason, the gate line is left out as a
duplicate. A gate that cannot run at all (the Protocol is not runtime-checkable,
or has data members) is always reported.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import typing_extensions
from beartype.door import is_bearable, is_subhint
from typing_extensions import get_protocol_members, is_protocol, is_typeddict

from contracts.init_call import InitCall

Rule: TypeAlias = Literal[
    "gate", "missing", "not-callable", "kind", "async", "shape", "annotation", "base", "init"
]
MethodKind: TypeAlias = Literal["instance method", "staticmethod", "classmethod"]
# Resolved annotations by name, and (name, error) for those that do not resolve.
ResolvedHints: TypeAlias = tuple[dict[str, object], list[tuple[str, str]]]
AsyncKind: TypeAlias = Literal[
    "coroutine function (async def)", "async generator function", "plain function"
]


@dataclass(frozen=True)
class Violation:
    """One way in which a class fails a Protocol; `str()` is one self-contained line."""

    cls: str
    protocol: str
    member: str
    rule: Rule
    message: str

    def __str__(self) -> str:
        where = f"{self.protocol}.{self.member}" if self.member else self.protocol
        return f"{self.cls} does not implement {where}: {self.message}"


class ContractError(ValueError):
    """A class does not implement its Protocol; the message has one line per violation."""

    def __init__(self, violations: tuple[Violation, ...], skipped: tuple[str, ...] = ()) -> None:
        super().__init__("\n".join(str(v) for v in violations))
        self.violations = violations
        self.skipped = skipped

    # Rebuilt from its fields, so it survives pickling (e.g. back from a Ray task).
    def __reduce__(
        self,
    ) -> tuple[type[ContractError], tuple[tuple[Violation, ...], tuple[str, ...]]]:
        return (ContractError, (self.violations, self.skipped))


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of checking one class against one Protocol.

    `cls` is the class FQN and `protocol` the Protocol's name. `skipped` lists what
    could not be judged (unresolvable annotations, data members, undecidable hints):
    notes, not failures.
    """

    cls: str
    protocol: str
    violations: tuple[Violation, ...]
    skipped: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    def __str__(self) -> str:
        if self.ok:
            head = f"{self.cls} implements {self.protocol}"
            return "\n".join([head, *(f"  skipped: {s}" for s in self.skipped)])
        return "\n".join(
            [*(str(v) for v in self.violations), *(f"  skipped: {s}" for s in self.skipped)]
        )

    def raise_if_failed(self) -> None:
        if self.violations:
            raise ContractError(self.violations, self.skipped)


CacheKey: TypeAlias = tuple[type, type, "type | None", "InitCall | None"]
_CACHE: dict[CacheKey, VerifyReport] = {}


def clear_cache() -> None:
    """Forget every cached report (after monkeypatching a class, for instance)."""
    _CACHE.clear()
    _protocol_signature.cache_clear()
    _protocol_hints.cache_clear()


def check(
    cls: type,
    protocol: type,
    *,
    base: type | None = None,
    init_call: InitCall | None = None,
    init_args: InitCall | None = None,
) -> VerifyReport:
    """Check `cls` against `protocol` and return the report; never raises for a bad class.

    `init_call` (canonical) is the constructor call the worker builder will make;
    `init_args` is accepted as an alias. Results are cached per
    (cls, protocol, base, init_call); see `clear_cache`.
    """
    call = _one_init_call(init_call, init_args)
    key: CacheKey = (cls, protocol, base, call)
    report = _CACHE.get(key)
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


def fqn(obj: type | types.FunctionType) -> str:
    """`module.QualName` of a class or function."""
    return f"{obj.__module__}.{obj.__qualname__}"


def _one_init_call(init_call: InitCall | None, init_args: InitCall | None) -> InitCall | None:
    if init_call is not None and init_args is not None and init_call != init_args:
        raise TypeError("pass init_call or its alias init_args, not both")
    return init_call if init_call is not None else init_args


# ---------------------------------------------------------------------------------------
# The checker


_EMPTY: Final = inspect.Parameter.empty
_POSITIONAL: Final = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_NAME: Final = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class _Placeholder:
    """Stands for an argument value when binding the builder's constructor call."""

    def __repr__(self) -> str:
        return "..."


_PLACEHOLDER: Final = _Placeholder()


class _Checker:
    def __init__(self, cls: type, protocol: type) -> None:
        if not isinstance(cls, type):
            raise TypeError(f"check() needs a class, got {cls!r}")
        if not is_protocol(protocol):
            raise TypeError(f"check() needs a typing.Protocol, got {protocol!r}")
        self.cls = cls
        self.protocol = protocol
        self.cls_name = fqn(cls)
        self.proto_name = protocol.__qualname__
        self.violations: list[Violation] = []
        self.skipped: list[str] = []

    def add(self, member: str, rule: Rule, message: str) -> None:
        self.violations.append(Violation(self.cls_name, self.proto_name, member, rule, message))

    def run(self, base: type | None, init_call: InitCall | None) -> VerifyReport:
        gate = self.gate()
        for name in protocol_members(self.protocol):
            self.member(name)
        if gate is not None and not any(
            v.rule in ("missing", "not-callable") for v in self.violations
        ):
            self.violations.insert(0, Violation(self.cls_name, self.proto_name, "", "gate", gate))
        if base is not None and not issubclass(self.cls, base):
            self.add("", "base", f"not a subclass of {fqn(base)}")
        if init_call is not None:
            self.init(init_call)
        return VerifyReport(
            self.cls_name, self.proto_name, tuple(self.violations), tuple(self.skipped)
        )

    def gate(self) -> str | None:
        """beartype's presence check; a message when it fails, None when it passes."""
        hint = f"beartype.door.is_bearable(cls, type[{self.proto_name}])"
        try:
            if bearable(self.cls, types.GenericAlias(type, (self.protocol,))):
                return None
        except Exception as exc:  # noqa: BLE001 - any failure of the gate is reported, not raised
            return f"{hint} cannot run: {_first_line(exc)}"
        return f"{hint} is False"

    def member(self, name: str) -> None:
        proto_raw = vars_lookup(self.protocol, name)
        if proto_raw is None or not callable(getattr(self.protocol, name)):
            # Data members exist on instances only; the class cannot show them.
            self.skipped.append(
                f"{self.proto_name}.{name} is a data member; not checked on a class"
            )
            return
        try:
            impl_raw = static_member(self.cls, name)
        except AttributeError:
            self.add(name, "missing", "missing")
            return
        impl = getattr(self.cls, name)
        if not callable(impl):
            self.add(name, "not-callable", f"not callable (found {type(impl_raw).__name__})")
            return
        proto = getattr(self.protocol, name)
        proto_kind, impl_kind = method_kind(proto_raw), method_kind(impl_raw)
        if proto_kind != impl_kind:
            self.add(
                name, "kind", f"{_article(impl_kind)}, the Protocol declares {_article(proto_kind)}"
            )
        proto_async, impl_async = async_kind(proto), async_kind(impl)
        if proto_async != impl_async:
            self.add(
                name,
                "async",
                f"{_article(impl_async)}, the Protocol declares {_article(proto_async)}",
            )
        try:
            proto_sig = _protocol_signature(self.protocol, name)
            impl_sig = caller_signature(impl, impl_kind)
        except (TypeError, ValueError) as exc:
            self.skipped.append(
                f"{self.proto_name}.{name}: signature unreadable ({exc}); call shape not checked"
            )
            return
        if impl_sig is None:
            self.add(name, "shape", "call shape: takes no parameter to receive the instance")
            return
        assert proto_sig is not None, "Protocol methods take self"
        for problem in shape_problems(proto_sig, impl_sig):
            self.add(name, "shape", f"call shape: {problem}")
        # An async def declares its coroutine's result, not what a call returns, so it cannot
        # be compared with a plain function's return; the async line says what is wrong.
        coroutine = "coroutine function (async def)"
        comparable = (proto_async == coroutine) == (impl_async == coroutine)
        self.annotations(name, impl, proto_sig, impl_sig, returns=comparable)

    def annotations(
        self,
        name: str,
        impl: object,
        proto_sig: inspect.Signature,
        impl_sig: inspect.Signature,
        *,
        returns: bool,
    ) -> None:
        proto_hints = self.hints(name, _protocol_hints(self.protocol, name), self.proto_name)
        impl_hints = self.hints(name, resolve_hints(impl), self.cls_name)
        for param, receiver in receivers(proto_sig, impl_sig):
            if param.name not in proto_hints or receiver.name not in impl_hints:
                continue
            want, got = proto_hints[param.name], impl_hints[receiver.name]
            verdict = self.subhint(name, want, got)
            if verdict is False:
                self.add(
                    name,
                    "annotation",
                    f"annotation: parameter {receiver.name!r} is {show_hint(got)}, "
                    f"which does not accept the Protocol's {show_hint(want)}",
                )
        if returns and "return" in proto_hints and "return" in impl_hints:
            want, got = proto_hints["return"], impl_hints["return"]
            if self.subhint(name, got, want) is False:
                self.add(
                    name,
                    "annotation",
                    f"annotation: returns {show_hint(got)}, "
                    f"which is not a {show_hint(want)} (the Protocol's return)",
                )

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
        except _Undecidable as exc:
            self.skipped.append(
                f"{self.proto_name}.{name}: cannot decide whether {show_hint(sub)} "
                f"is a {show_hint(sup)} ({exc}); not checked"
            )
            return None

    def init(self, call: InitCall) -> None:
        shown = ", ".join([*call.positional, *(f"{k}=..." for k in call.keywords)])
        try:
            sig = inspect.signature(self.cls)
        except (TypeError, ValueError) as exc:
            self.skipped.append(
                f"{self.cls_name}: constructor signature unreadable ({exc}); init not checked"
            )
            return
        try:
            sig.bind(
                *(_PLACEHOLDER for _ in call.positional),
                **dict.fromkeys(call.keywords, _PLACEHOLDER),
            )
        except TypeError as exc:
            self.add("", "init", f"constructor cannot take {self.cls.__name__}({shown}): {exc}")


def static_member(cls: type, name: str) -> object:
    """The raw attribute (function, staticmethod, ...) `name` in the class MRO.

    Like `inspect.getattr_static` but without the metaclass: an instance does not
    see metaclass attributes, and typing's Protocol check does not either.
    """
    for klass in cls.__mro__:
        namespace = vars(klass)
        if name in namespace:
            return namespace[name]
    raise AttributeError(name)


def vars_lookup(cls: type, name: str) -> object | None:
    """`static_member`, or None when the name is only annotated (a data member)."""
    try:
        return static_member(cls, name)
    except AttributeError:
        return None


def protocol_members(protocol: type) -> list[str]:
    """The Protocol's members, base Protocols' first, each in definition order."""
    members = get_protocol_members(protocol)
    ordered: list[str] = []
    for klass in reversed(protocol.__mro__):
        for name in [*vars(klass), *vars(klass).get("__annotations__", {})]:
            if name in members and name not in ordered:
                ordered.append(name)
    return ordered


def _first_line(exc: BaseException) -> str:
    # beartype wraps the interesting TypeError; its own message spans many lines.
    root = exc.__cause__ if exc.__cause__ is not None else exc
    text = str(root).strip().splitlines()
    return f"{type(root).__name__}: {text[0] if text else ''}"


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


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


def caller_signature(func: object, kind: MethodKind) -> inspect.Signature | None:
    """The signature as a caller of `instance.member(...)` sees it; None if self cannot bind."""
    sig = inspect.signature(typing.cast("cabc.Callable[..., object]", func))
    if kind != "instance method":
        return sig  # getattr() already bound a classmethod's cls
    params = list(sig.parameters.values())
    if params and params[0].kind in _POSITIONAL:
        return sig.replace(parameters=params[1:])
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return sig  # *args swallows self
    return None


def shape_problems(proto: inspect.Signature, impl: inspect.Signature) -> list[str]:
    """Calls the Protocol's signature accepts that the implementation's would refuse."""
    problems: list[str] = []
    p_params = list(proto.parameters.values())
    i_params = list(impl.parameters.values())
    p_pos = [p for p in p_params if p.kind in _POSITIONAL]
    i_pos = [p for p in i_params if p.kind in _POSITIONAL]
    p_names = {p.name: p for p in p_params if p.kind in _BY_NAME}
    i_names = {p.name: p for p in i_params if p.kind in _BY_NAME}
    p_var = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in p_params)
    i_var = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in i_params)
    p_varkw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in p_params)
    i_varkw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in i_params)

    i_positional_only = {p.name for p in i_pos if p.kind is inspect.Parameter.POSITIONAL_ONLY}
    if p_var and not i_var:
        problems.append("has no *args, the Protocol accepts any number of positional arguments")
    if p_varkw and not i_varkw:
        problems.append("has no **kwargs, the Protocol accepts any keyword argument")

    for index, param in enumerate(p_pos):
        by_keyword = param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        if index < len(i_pos):
            other = i_pos[index]
            if by_keyword and other.name != param.name:
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"the Protocol names it {param.name!r}"
                )
            elif by_keyword and other.kind is inspect.Parameter.POSITIONAL_ONLY:
                problems.append(
                    f"{param.name!r} is positional-only, the Protocol allows it by keyword"
                )
            elif (
                not by_keyword
                and other.name in p_names
                and other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            ):
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"which the Protocol passes by keyword"
                )
            continue
        named = i_names.get(param.name)
        if (
            by_keyword
            and named is not None
            and named.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ):
            continue  # it sits at another position: reported as a name mismatch above
        if by_keyword and param.name in i_positional_only:
            problems.append(f"{param.name!r} is positional-only, the Protocol allows it by keyword")
        elif not by_keyword:
            if not i_var and index == len(i_pos):
                problems.append(
                    f"takes {len(i_pos)} positional argument(s), the Protocol allows {len(p_pos)}"
                )
        elif named is None and not i_varkw and not i_var:
            problems.append(f"has no parameter {param.name!r}, the Protocol has")
        elif named is None and not i_varkw:
            problems.append(f"does not accept {param.name!r} by keyword, the Protocol does")
        elif not i_var or (named is not None and named.default is _EMPTY):
            # Passed positionally it would land in no parameter, or in *args and not here.
            problems.append(
                f"takes {param.name!r} by keyword only, the Protocol allows it positionally"
            )
    if p_var:
        # The Protocol's extra positional arguments land on these.
        for index, other in enumerate(i_pos[len(p_pos) :], start=len(p_pos)):
            if other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and other.name in p_names:
                problems.append(
                    f"positional parameter {index + 1} is named {other.name!r}, "
                    f"which the Protocol passes by keyword"
                )
    for name, param in p_names.items():
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        if name in i_positional_only:
            problems.append(f"{name!r} is positional-only, the Protocol passes it by keyword")
        elif name not in i_names and not i_varkw:
            problems.append(f"has no keyword parameter {name!r}, the Protocol has")

    # Implementation parameters every Protocol call must fill.
    for index, other in enumerate(i_pos):
        if other.default is not _EMPTY:
            continue
        if index < len(p_pos):
            param = p_pos[index]
            renamed = param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and (
                param.name != other.name
            )  # already reported as a name mismatch
            if param.default is not _EMPTY and not renamed:
                problems.append(_required_here(other.name))
            continue
        supplied = p_names.get(other.name)
        if other.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and supplied is not None:
            if supplied.default is not _EMPTY:
                problems.append(_required_here(other.name))
            continue
        problems.append(f"extra parameter {other.name!r} needs a default")
    for name, other in i_names.items():
        if other.kind is not inspect.Parameter.KEYWORD_ONLY or other.default is not _EMPTY:
            continue
        supplied = p_names.get(name)
        if supplied is None:
            problems.append(f"extra keyword-only parameter {name!r} needs a default")
        elif supplied.default is not _EMPTY:
            problems.append(_required_here(name))
    return problems


def _required_here(name: str) -> str:
    return f"{name!r} has no default, the Protocol makes it optional"


def receivers(
    proto: inspect.Signature, impl: inspect.Signature
) -> list[tuple[inspect.Parameter, inspect.Parameter]]:
    """(Protocol parameter, implementation parameter receiving it) pairs, where one exists."""
    params = list(impl.parameters.values())
    positional = [p for p in params if p.kind in _POSITIONAL]
    by_name = {p.name: p for p in params if p.kind in _BY_NAME}
    var = {p.kind: p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    pairs: list[tuple[inspect.Parameter, inspect.Parameter]] = []
    proto_positional = [p for p in proto.parameters.values() if p.kind in _POSITIONAL]
    for param in proto.parameters.values():
        receiver: inspect.Parameter | None
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            receiver = var.get(param.kind)
        elif param.kind in _BY_NAME and param.name in by_name:
            receiver = by_name[param.name]
        elif param.kind in _POSITIONAL:
            index = proto_positional.index(param)
            receiver = (
                positional[index] if index < len(positional) else var.get(param.VAR_POSITIONAL)
            )
        else:
            receiver = var.get(param.VAR_KEYWORD)
        if receiver is not None:
            pairs.append((param, receiver))
    return pairs


# ---------------------------------------------------------------------------------------
# Annotations


# The Protocol side of each member is the same for every class checked against it.
@functools.cache
def _protocol_signature(protocol: type, name: str) -> inspect.Signature | None:
    return caller_signature(getattr(protocol, name), method_kind(static_member(protocol, name)))


@functools.cache
def _protocol_hints(protocol: type, name: str) -> ResolvedHints:
    return resolve_hints(getattr(protocol, name))


def resolve_hints(func: object) -> ResolvedHints:
    """Resolved annotations of `func`, and (name, error) for each one that does not resolve.

    One unresolvable annotation does not hide the others: on failure each is tried alone.
    """
    target: object = getattr(func, "__func__", func)  # bound classmethods
    raw = getattr(target, "__annotations__", None)
    if not isinstance(raw, dict) or not raw:
        return {}, []
    try:
        return dict(typing.get_type_hints(target, include_extras=True)), []
    except Exception:  # noqa: BLE001 - any resolution error falls back to one by one
        pass
    unwrapped = inspect.unwrap(typing.cast("cabc.Callable[..., object]", target))
    globalns: dict[str, Any] = getattr(unwrapped, "__globals__", {})
    hints: dict[str, object] = {}
    unresolved: list[tuple[str, str]] = []
    for key, value in raw.items():
        one = types.SimpleNamespace(__annotations__={key: value})
        try:
            hints[key] = typing.get_type_hints(one, globalns=globalns, include_extras=True)[key]
        except Exception as exc:  # noqa: BLE001 - NameError, SyntaxError, TypeError alike
            unresolved.append((key, f"{type(exc).__name__}: {exc}"))
    return hints, unresolved


class _Undecidable(Exception):
    """Neither beartype nor the structural rules below can compare two hints."""


_UNIONS: Final = (typing.Union, types.UnionType)
# Origins whose type arguments are all covariant (read-only containers and streams).
_COVARIANT: Final = frozenset(
    {
        cabc.Iterable,
        cabc.Iterator,
        cabc.AsyncIterable,
        cabc.AsyncIterator,
        cabc.Awaitable,
        cabc.Sequence,
        cabc.Collection,
        cabc.Container,
        cabc.Reversible,
        cabc.Set,
        frozenset,
        tuple,
        type,
    }
)
# PEP 484's numeric tower, which beartype's is_subhint does not apply.
_NUMERIC_TOWER: Final[dict[object, frozenset[type]]] = {
    float: frozenset({int, bool}),
    complex: frozenset({int, float, bool}),
}
# Generators stream their first argument; as iterators they are compared on it alone.
_GENERATORS: Final = frozenset({cabc.Generator, cabc.AsyncGenerator})


def is_subhint_safe(sub: object, sup: object) -> bool:
    """`beartype.door.is_subhint`, extended to TypedDicts and generator/iterator pairs.

    beartype raises on TypedDicts ("TypedDict does not support instance and class
    checks") and calls AsyncGenerator[Y, S] vs AsyncIterator[Y] undecidable; both occur
    in worker Protocols, so they are compared structurally here (PEP 589 rules for
    TypedDicts). Raises `_Undecidable` when no answer can be given.
    """
    if sub is sup or _same(sub, sup):
        return True
    if sup is Any or sup is object or sub is Any:
        return True
    if sub in _NUMERIC_TOWER.get(sup, ()):
        return True
    sub, sup = _strip_annotated(sub), _strip_annotated(sup)
    if typing.get_origin(sub) in _UNIONS:
        return all(is_subhint_safe(arg, sup) for arg in typing.get_args(sub))
    if typing.get_origin(sup) in _UNIONS:
        return any(_try_subhint(sub, arg) for arg in typing.get_args(sup))
    if is_typeddict(sub) or is_typeddict(sup):
        return _typeddict_subhint(sub, sup)
    if not (_has_typeddict(sub) or _has_typeddict(sup)):
        try:
            return is_subhint(as_hint(sub), as_hint(sup))
        except Exception:  # noqa: BLE001 - beartype raises its own and TypeErrors
            pass
    return _generic_subhint(sub, sup)


def as_hint(hint: object) -> Any:  # noqa: ANN401
    # beartype types its hint parameters differently for mypy and pyrefly; the hints
    # handled here come from get_type_hints and are valid at runtime.
    return hint


def bearable(value: object, hint: object) -> bool:
    """`beartype.door.is_bearable` for a hint held as a plain object."""
    return is_bearable(value, as_hint(hint))


def _same(a: object, b: object) -> bool:
    try:
        return a == b
    except Exception:  # noqa: BLE001 - exotic hints may not compare
        return False


def _try_subhint(sub: object, sup: object) -> bool:
    try:
        return is_subhint_safe(sub, sup)
    except _Undecidable:
        return False


def _strip_annotated(hint: object) -> object:
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def _has_typeddict(hint: object) -> bool:
    return is_typeddict(hint) or any(_has_typeddict(arg) for arg in typing.get_args(hint))


def _typeddict_subhint(sub: object, sup: object) -> bool:
    if not is_typeddict(sup):
        # A TypedDict is a Mapping[str, object], never a dict[...] (PEP 589).
        origin = typing.get_origin(sup) or sup
        args = typing.get_args(sup)
        return origin is cabc.Mapping and (not args or _same(args[0], str))
    if not is_typeddict(sub):
        return False
    try:
        sub_items = typeddict_fields(sub)
        sup_items = typeddict_fields(sup)
    except Exception as exc:  # noqa: BLE001 - unresolvable field annotations
        raise _Undecidable(f"TypedDict fields unresolvable: {exc}") from exc
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


def _generic_subhint(sub: object, sup: object) -> bool:
    sub_origin = typing.get_origin(sub) or sub
    sup_origin = typing.get_origin(sup) or sup
    if not (isinstance(sub_origin, type) and isinstance(sup_origin, type)):
        raise _Undecidable("not comparable structurally")
    if not issubclass(sub_origin, sup_origin):
        return False
    sub_args, sup_args = typing.get_args(sub), typing.get_args(sup)
    if not sub_args or not sup_args:
        return True  # a bare origin stands for any arguments
    if sub_origin in _GENERATORS and len(sup_args) == 1 and sup_origin in _COVARIANT:
        return is_subhint_safe(sub_args[0], sup_args[0])
    if len(sub_args) != len(sup_args) or Ellipsis in sub_args or Ellipsis in sup_args:
        raise _Undecidable("type arguments differ in number")
    covariant = sup_origin in _COVARIANT
    for got, want in zip(sub_args, sup_args, strict=True):
        if not is_subhint_safe(got, want):
            return False
        if not covariant and not is_subhint_safe(want, got):
            return False
    return True


def show_hint(hint: object) -> str:
    """A hint as a person writes it: `dict[str, float]`, `TrainResult`, `None`."""
    if hint is type(None) or hint is None:
        return "None"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in _UNIONS:
        return " | ".join(show_hint(arg) for arg in args)
    if origin is not None and args and origin is not typing.Annotated and origin is not Literal:
        name = getattr(origin, "__qualname__", None) or repr(origin)
        return f"{name}[{', '.join(show_hint(a) for a in args)}]"
    if isinstance(hint, type):
        return hint.__qualname__
    if hint is Ellipsis:
        return "..."
    return repr(hint).replace("typing.", "").replace("collections.abc.", "")
