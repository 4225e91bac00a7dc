"""What a check finds: violations, undecidable members, and the error that carries them.

The report holds names (strings), not classes, so it can travel back from a check run
in the worker's own Python environment to a driver that never imports the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Rule: TypeAlias = Literal[
    "gate",
    "missing",
    "not-callable",
    "kind",
    "async",
    "shape",
    "annotation",
    "attribute",
    "undecidable",
    "base",
    "init",
]

# Rules stricter than the typing spec, each kept because the worker runtime needs it
# (the guide's contract section gives the reasons). Every other rule is the spec's.
STRICTER_RULES: Final[frozenset[Rule]] = frozenset({"async", "gate", "base", "init"})


@dataclass(frozen=True)
class Violation:
    """One way in which a class fails a Protocol; `str()` is one self-contained line.

    `location` is `file:line` of the offending member's `def` when the class has
    source there (empty otherwise); it ends the line in brackets.
    """

    cls: str
    protocol: str
    member: str
    rule: Rule
    message: str
    location: str = ""

    def __str__(self) -> str:
        where = f"{self.protocol}.{self.member}" if self.member else self.protocol
        at = f" [{self.location}]" if self.location else ""
        return f"{self.cls} does not implement {where}: {self.message}{at}"


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
    could not be judged (unresolvable annotations): notes, not failures.
    `undecidable` lists members the class alone cannot settle (an attribute that
    only `__init__` sets, without an annotation): one line each, rule
    "undecidable"; they do not fail the check, and they are never silently passed.
    """

    cls: str
    protocol: str
    violations: tuple[Violation, ...]
    skipped: tuple[str, ...]
    undecidable: tuple[Violation, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def spec_ok(self) -> bool:
        """The typing spec's verdict: no violation outside the named stricter rules."""
        return not any(v.rule not in STRICTER_RULES for v in self.violations)

    def __str__(self) -> str:
        notes = [
            *(f"  undecidable: {v}" for v in self.undecidable),
            *(f"  skipped: {s}" for s in self.skipped),
        ]
        if self.ok:
            return "\n".join([f"{self.cls} implements {self.protocol}", *notes])
        return "\n".join([*(str(v) for v in self.violations), *notes])

    def raise_if_failed(self) -> None:
        if self.violations:
            raise ContractError(self.violations, self.skipped)
