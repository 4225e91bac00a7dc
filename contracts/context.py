"""What one check knows and collects: the class, the Protocol, how their type variables
are bound, and the report lines found so far. The rule families (`attributes`,
`signatures`, and the member rules in `verify`) extend it.
"""

from __future__ import annotations

import typing
from typing import Any, Final

from typing_extensions import is_protocol

from contracts.hints import (
    ResolvedHints,
    Undecidable,
    generic_maps,
    is_subhint_safe,
    show_hint,
)
from contracts.members import fqn, owner_of
from contracts.report import Rule, Violation

_SELF: Final = (typing.Self,)


class CheckContext:
    def __init__(self, cls: type, protocol: object) -> None:
        if not isinstance(cls, type):
            raise TypeError(f"check() needs a class, got {cls!r}")
        origin = typing.get_origin(protocol) or protocol
        if not (isinstance(origin, type) and is_protocol(origin)):
            raise TypeError(f"check() needs a typing.Protocol, got {protocol!r}")
        self.cls = cls
        self.protocol = origin
        self.alias = protocol
        self.cls_name = safe(lambda: fqn(cls), repr(cls))
        self.proto_name = origin.__qualname__ if protocol is origin else show_hint(protocol)
        # An unspecialised generic Protocol reads as P[Any, ...], as in the checkers.
        self.class_maps = safe(lambda: generic_maps(origin, typing.get_args(protocol)), {})
        self.impl_maps = safe(lambda: generic_maps(cls), {})
        self.self_map: dict[object, object] = {s: cls for s in _SELF}
        self.violations: list[Violation] = []
        self.undecidable: list[Violation] = []
        self.skipped: list[str] = []
        self.where = ""

    def add(self, member: str, rule: Rule, message: str) -> None:
        line = Violation(self.cls_name, self.proto_name, member, rule, message, self.where)
        (self.undecidable if rule == "undecidable" else self.violations).append(line)

    def type_args(self, owner: type, name: str) -> dict[object, object]:
        """How the class-level type variables of the class defining `owner.name` are bound."""
        maps = self.class_maps if owner is self.protocol else self.impl_maps
        defining = safe(lambda: owner_of(owner, name), owner)
        return dict(maps.get(defining, {}))

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


def safe(func: typing.Callable[[], Any], default: Any) -> Any:  # noqa: ANN401
    try:
        return func()
    except Exception:  # noqa: BLE001 - introspection of a hostile object
        return default


def first_line(exc: BaseException) -> str:
    # beartype wraps the interesting TypeError; its own message spans many lines.
    root = exc.__cause__ if exc.__cause__ is not None else exc
    text = str(root).strip().splitlines()
    return f"{type(root).__name__}: {text[0] if text else ''}"
