"""Protocol members the runtime sees only indirectly (issue 22): overloads without an
implementation, an unpacked TypedDict's open keys, `__getattr__`, a TypeVar in the body;
and a gate that cannot run on such a Protocol (issue 29).
The generated pairs (tests/static/generator.py) judge the same against mypy and pyrefly."""

from __future__ import annotations

from typing import (
    Any,
    NotRequired,
    Protocol,
    TypedDict,
    TypeVar,
    Unpack,
    overload,
    runtime_checkable,
)

import pytest

from contracts import check, clear_cache
from contracts.verify import protocol_members


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    clear_cache()


def violations(cls: type, protocol: type) -> list[tuple[str, str, str]]:
    return [(v.rule, v.member, v.message) for v in check(cls, protocol).violations]


# --- 1. a member declared only by @overload ----------------------------------------------


class OverloadedOnly(Protocol):
    @overload
    def f(self, x: int) -> int: ...
    @overload
    def f(self, x: str) -> str: ...


class BothOverloads:
    @overload
    def f(self, x: int) -> int: ...
    @overload
    def f(self, x: str) -> str: ...
    def f(self, x: int | str) -> int | str:
        return x


class OneUnion:
    def f(self, x: int | str) -> Any:
        return x


class IntOnly:
    def f(self, x: int) -> int:
        return x


def test_overload_only_member_accepts_a_class_taking_every_overload() -> None:
    assert check(BothOverloads, OverloadedOnly).ok
    assert check(OneUnion, OverloadedOnly).ok


def test_overload_only_member_names_the_overload_a_class_misses() -> None:
    found = violations(IntOnly, OverloadedOnly)
    assert found, "IntOnly cannot take f(x: str)"
    assert {rule for rule, _, _ in found} == {"annotation"}
    assert all(member == "f" and "(overload (x: 'str') -> str)" in text
               for _, member, text in found)


def test_overload_only_member_of_a_class_made_by_exec() -> None:
    # No source file: the overloads are still found by the class's module and name.
    namespace: dict[str, Any] = {"__name__": "made_by_exec"}
    exec(  # noqa: S102 - our own literal class text
        "from typing import Protocol, overload\n"
        "class Made(Protocol):\n"
        "    @overload\n"
        "    def f(self, x: int) -> int: ...\n"
        "    @overload\n"
        "    def f(self, x: bytes) -> bytes: ...\n",
        namespace,
    )
    made = namespace["Made"]
    assert check(OneUnion, made).ok is False  # bytes is not int | str
    assert check(BothOverloads, made).ok is False


# --- 2. **kwargs: Unpack[TD] against a class that spells TD's keys out ----------------------


class Options(TypedDict):
    a: int
    b: NotRequired[str]


class TakesOptions(Protocol):
    def f(self, **kwargs: Unpack[Options]) -> None: ...


class NamesTheKeys:
    def f(self, *, a: int, b: str = "") -> None: ...


class NamesTheKeysAndMore:
    def f(self, *, a: int, b: str = "", **more: object) -> None: ...


class UnpacksToo:
    def f(self, **kwargs: Unpack[Options]) -> None: ...


def test_unpacked_typeddict_needs_kwargs_since_a_typeddict_is_open() -> None:
    (found,) = violations(NamesTheKeys, TakesOptions)
    assert found[:2] == ("shape", "f")
    assert "takes no **kwargs" in found[2] and "a TypedDict is open" in found[2]


def test_unpacked_typeddict_is_met_by_kwargs_or_the_same_unpack() -> None:
    assert check(NamesTheKeysAndMore, TakesOptions).ok
    assert check(UnpacksToo, TakesOptions).ok


# --- 3. members found through __getattr__ ----------------------------------------------------


class HasCount(Protocol):
    count: int


class ReadsCount(Protocol):
    @property
    def count(self) -> int: ...


class DynamicInt:
    def __getattr__(self, name: str) -> int:
        raise AttributeError(name)


class DynamicStr:
    def __getattr__(self, name: str) -> str:
        raise AttributeError(name)


class DynamicSettable(DynamicInt):
    def __setattr__(self, name: str, value: int) -> None:
        object.__setattr__(self, name, value)


def test_getattr_provides_a_read_only_member_of_its_return_type() -> None:
    assert check(DynamicInt, ReadsCount).ok
    (found,) = violations(DynamicStr, ReadsCount)
    assert found[:2] == ("annotation", "count")
    assert "str, the Protocol's attribute is int" in found[2]


def test_getattr_alone_is_read_only_a_settable_member_needs_setattr() -> None:
    (found,) = violations(DynamicInt, HasCount)
    assert found[:2] == ("attribute", "count")
    assert "found through __getattr__, no __setattr__" in found[2]
    assert check(DynamicSettable, HasCount).ok


# --- 4. a TypeVar assigned in a Protocol body ---------------------------------------------


class Echo(Protocol):
    U = TypeVar("U")

    def echo(self, x: U) -> U: ...


class EchoesAnything:
    def echo(self, x: T) -> T:
        return x


class EchoesInts:
    def echo(self, x: int) -> int:
        return x


T = TypeVar("T")


def test_typevar_in_a_protocol_body_is_not_a_member() -> None:
    assert protocol_members(Echo) == ["echo"]
    assert check(EchoesAnything, Echo).ok


def test_typevar_in_a_protocol_body_still_types_its_methods() -> None:
    # `U` names a method-scoped type variable: a class taking only int is not as generic.
    found = violations(EchoesInts, Echo)
    assert found and {(rule, member) for rule, member, _ in found} == {("annotation", "echo")}


# --- 5. the gate cannot run: a runtime-checkable Protocol with a TypeVar in its body -------
# mypy's testTypeVarInProtocolBody: `g: C = f_bad` is an error, `g = f_good` is accepted.


@runtime_checkable
class CallsAnything(Protocol):
    V = TypeVar("V")

    def __call__(self, t: V) -> V: ...


class FGood:
    """`f_good`: generic in its own type variable."""

    def __call__(self, t: T) -> T:
        return t


class FBad:
    """`f_bad`: takes and returns int only."""

    def __call__(self, t: int) -> int:
        return t


def test_a_gate_that_cannot_run_is_no_verdict() -> None:
    report = check(FGood, CallsAnything)
    assert report.ok, [str(v) for v in report.violations]
    # typing's own words, which 3.13 extends with the members' names
    (skipped,) = report.skipped
    assert skipped.startswith(
        "gate: beartype.door.is_bearable(cls, type[CallsAnything]) cannot run (TypeError: "
        "Protocols with non-method members don't support issubclass()")
    assert skipped.endswith("); judged by the member rules alone")


def test_without_the_gate_the_member_rules_still_reject_f_bad() -> None:
    found = violations(FBad, CallsAnything)
    assert {(rule, member) for rule, member, _ in found} == {("annotation", "__call__")}
