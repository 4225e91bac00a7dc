"""The typing spec's protocol rules, one behaviour each (the generated pairs check the
same against mypy and pyrefly; these run without them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NotRequired, Protocol, Self, TypedDict, TypeVar, Unpack, overload

import pytest

from contracts import check, clear_cache

T = TypeVar("T")
N = TypeVar("N", bound=float)


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    clear_cache()


def rules(cls: type, protocol: type) -> list[tuple[str, str]]:
    return [(v.rule, v.member) for v in check(cls, protocol).violations]


class Named(Protocol):
    name: str


class SetInInit:
    def __init__(self) -> None:
        self.name = make_name()


class AnnotatedInInit:
    def __init__(self) -> None:
        self.name: int = 0


class ReadOnlyName:
    @property
    def name(self) -> str:
        return ""


class NamedSubclass(Named):
    def other(self) -> None:
        return None


def make_name() -> str:
    return "x"


def test_attribute_set_in_a_method_is_undecidable_not_passed_silently() -> None:
    report = check(SetInInit, Named)
    assert report.ok
    (line,) = report.undecidable
    assert (line.rule, line.member) == ("undecidable", "name")
    assert "set on the instance in a method" in line.message
    assert "undecidable: " in str(report)


def test_attribute_annotated_in_a_method_is_compared() -> None:
    assert rules(AnnotatedInInit, Named) == [("annotation", "name")]


def test_settable_protocol_attribute_needs_a_settable_member() -> None:
    assert rules(ReadOnlyName, Named) == [("attribute", "name")]


def test_declared_only_in_the_protocol_is_missing() -> None:
    assert rules(NamedSubclass, Named) == [("missing", "name")]


class Counter(Protocol):
    total: ClassVar[int]


class CounterOk:
    total: ClassVar[int] = 0


class CounterInstance:
    total: int = 0


def test_classvar_needs_a_classvar() -> None:
    assert rules(CounterOk, Counter) == []
    assert rules(CounterInstance, Counter) == [("attribute", "total")]


class Parse(Protocol):
    @overload
    def parse(self, x: int) -> int: ...
    @overload
    def parse(self, x: str) -> str: ...
    def parse(self, x: int | str) -> int | str: ...


class ParseUnion:
    def parse(self, x: int | str) -> int | str:
        return x


class ParseGeneric:
    def parse(self, x: T) -> T:
        return x


def test_each_protocol_overload_must_be_accepted() -> None:
    assert rules(ParseGeneric, Parse) == []
    assert rules(ParseUnion, Parse) == [("annotation", "parse"), ("annotation", "parse")]


class Options(TypedDict):
    a: int
    b: NotRequired[str]


class Configure(Protocol):
    def configure(self, **kw: Unpack[Options]) -> None: ...


class ConfigureExplicit:
    # `**more`: a TypedDict is open, callers may pass keys beyond Options (PEP 692).
    def configure(self, *, a: int, b: str = "", **more: object) -> None:
        return None


class ConfigureMissingB:
    def configure(self, *, a: int, **more: int) -> None:
        return None


def test_unpacked_kwargs_are_checked_field_by_field() -> None:
    assert rules(ConfigureExplicit, Configure) == []
    # b: str would land in **more: int.
    assert rules(ConfigureMissingB, Configure) == [("annotation", "configure")]


class Cloner(Protocol):
    def clone(self) -> Self: ...


class ClonesItself:
    def clone(self) -> ClonesItself:
        return self


class ClonesToInt:
    def clone(self) -> int:
        return 0


def test_self_is_the_class_checked() -> None:
    assert rules(ClonesItself, Cloner) == []
    assert rules(ClonesToInt, Cloner) == [("annotation", "clone")]


class Scale(Protocol):
    def scale(self, x: N) -> N: ...


class ScaleAny:
    def scale(self, x: T) -> T:
        return x


class ScaleFloat:
    def scale(self, x: float) -> float:
        return x


def test_method_scoped_type_variables() -> None:
    assert rules(ScaleAny, Scale) == []
    assert rules(ScaleFloat, Scale) == [("annotation", "scale")]


class Values(Protocol):
    def values(self) -> Sequence[complex]: ...


class IntValues:
    def values(self) -> Sequence[int]:
        return []


def test_numeric_promotion_inside_containers() -> None:
    assert rules(IntValues, Values) == []


class Anything(Protocol):
    def run(self, *args: Any, **kwargs: Any) -> int: ...


class RunsTwo:
    def run(self, a: int, b: str) -> int:
        return 0


class Old(Protocol):
    def put(self, __x: int) -> None: ...


class PutAnyName:
    def put(self, value: int) -> None:
        return None


def test_gradual_signature_and_old_style_positional_only() -> None:
    assert rules(RunsTwo, Anything) == []
    assert rules(PutAnyName, Old) == []
