"""`check` never raises and never hangs: every failure to introspect is a line naming the member."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Generic, Protocol, TypeVar

import pytest

from contracts import VerifyReport, check, clear_cache

T_co = TypeVar("T_co", covariant=True)


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    clear_cache()


class Job(Protocol):
    def run(self, x: int) -> int: ...


class RaisingDescriptor:
    def __get__(self, obj: object, owner: type | None = None) -> object:
        raise RuntimeError("boom on access")


class AccessRaises:
    run = RaisingDescriptor()


class BuiltinMember:
    run = print  # no readable signature on every Python; a C function


class CycleWrapped:
    def run(self, x: int) -> int:
        return x


CycleWrapped.run.__wrapped__ = CycleWrapped.run  # type: ignore[attr-defined]  # a cycle on purpose


class CycleWithSignature:
    def run(self, x: int) -> int:
        return x


CycleWithSignature.run.__annotations__["x"] = "NoSuchName"  # unresolvable on purpose
CycleWithSignature.run.__wrapped__ = CycleWithSignature.run  # type: ignore[attr-defined]  # a cycle
CycleWithSignature.run.__signature__ = inspect.signature(  # type: ignore[attr-defined]  # set on purpose
    lambda self, x: 0
)


class BadSignature:
    def run(self, x: int) -> int:
        return x


BadSignature.run.__signature__ = "not a signature"  # type: ignore[attr-defined]  # hostile


class Node(Protocol):
    """A recursive Protocol, not runtime-checkable."""

    def next(self) -> Node: ...


class Chain:
    def next(self) -> Chain:
        return self


class Dead:
    def next(self) -> int:
        return 0


class Holds(Protocol):
    def child(self) -> Node: ...


class HoldsChain:
    def child(self) -> Chain:
        return Chain()


class HoldsDead:
    def child(self) -> Dead:
        return Dead()


class Unresolvable(Protocol):
    def run(self, x: NoSuchName) -> int: ...  # type: ignore[name-defined]  # noqa: F821 - hostile


class Box(Protocol, Generic[T_co]):
    def get(self) -> T_co: ...


class IntBox:
    def get(self) -> int:
        return 1


def test_a_descriptor_that_raises_is_an_undecidable_line() -> None:
    report = check(AccessRaises, Job)
    assert report.ok
    (line,) = report.undecidable
    assert (line.member, line.rule) == ("run", "undecidable")
    assert "RuntimeError: boom on access" in str(line)


@pytest.mark.parametrize("cls", [BuiltinMember, CycleWrapped, BadSignature])
def test_unreadable_members_never_raise(cls: type) -> None:
    report = check(cls, Job)
    lines = [*report.violations, *report.undecidable]
    assert len(lines) == 1 and lines[0].member == "run"
    assert report.ok == (cls is not BuiltinMember)  # print takes no keyword 'x': a violation


def test_wrapped_cycle_with_a_signature_and_an_unresolvable_annotation_ends() -> None:
    # typing.get_type_hints follows __wrapped__ without a cycle check; the verifier must not
    # let it. Run in a daemon thread so that a regression fails instead of hanging the suite.
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(check(CycleWithSignature, Job)),
                              daemon=True)
    worker.start()
    worker.join(30)
    assert found, "check() did not return: the __wrapped__ cycle was followed"
    (report,) = found
    assert isinstance(report, VerifyReport) and report.ok
    assert any("annotation of parameter 'x' could not be resolved" in n for n in report.skipped)


def test_recursive_plain_protocols_are_compared_structurally() -> None:
    assert check(Chain, Node).ok
    (violation,) = check(Dead, Node).violations
    assert violation.message.startswith("annotation: returns int, which is not a Node")
    assert check(HoldsChain, Holds).ok
    (nested,) = check(HoldsDead, Holds).violations
    assert nested.message.startswith("annotation: returns Dead, which is not a Node")


def test_unresolvable_protocol_annotation_is_skipped_by_name() -> None:
    report = check(IntBox, Unresolvable)
    assert [v.message for v in report.violations] == ["missing"]
    report = check(BadSignature, Unresolvable)
    assert report.ok
    assert report.skipped == (
        "Unresolvable.run: annotation of parameter 'x' could not be resolved "
        "(NameError: name 'NoSuchName' is not defined); not checked",
    )
    (line,) = report.undecidable
    assert line.member == "run"
    # inspect's own words, which differ by Python release (3.13: "... has invalid signature")
    assert line.message.startswith("its signature is unreadable (")
    assert "not a signature" in line.message or "invalid signature" in line.message


def test_specialised_generic_protocol() -> None:
    assert check(IntBox, Box[int]).ok
    assert check(IntBox, Box).ok  # Box reads as Box[Any]
    (violation,) = check(IntBox, Box[str]).violations
    assert str(violation).startswith(
        f"{__name__}.IntBox does not implement Box[str].get: annotation: returns int, "
        "which is not a str"
    )


def test_misuse_is_a_type_error_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="needs a class"):
        check(IntBox(), Job)  # type: ignore[arg-type]  # an instance, not a class
    with pytest.raises(TypeError, match="needs a typing.Protocol"):
        check(IntBox, int)


def test_functools_wraps_blind_spot_is_documented_behaviour() -> None:
    # A decorator that changes the return type but copies annotations: the runtime sees
    # the original's annotations (the guide lists it; `check --static` sees it).
    def to_str(func: Any) -> Any:  # noqa: ANN401 - the decorator under test
        @functools.wraps(func)
        def wrapper(*args: object) -> str:
            return str(func(*args))

        return wrapper

    class Decorated:
        @to_str
        def run(self, x: int) -> int:
            return x

    assert check(Decorated, Job).ok


def test_never_raises_on_the_standard_library() -> None:
    # Classes nobody here wrote: every class of a few stdlib modules against every worker
    # Protocol and the Protocols of this module. A report comes back for each.
    import builtins
    import collections
    import enum
    import io
    import pathlib
    import typing

    from contracts import PROTOCOLS

    protocols = [*PROTOCOLS.values(), Job, Node, Holds, Unresolvable, Box, Box[int]]
    classes = [
        value
        for module in (
            vars(builtins),
            vars(collections),
            vars(enum),
            vars(io),
            vars(pathlib),
            vars(typing),
        )
        for value in module.values()
        if isinstance(value, type)
    ]
    assert len(classes) > 150
    for cls in classes:
        for protocol in protocols:
            report = check(cls, protocol)
            assert report.cls and report.protocol
