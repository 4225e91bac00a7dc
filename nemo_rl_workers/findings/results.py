"""The one shape every command's results take for the machine-readable formats.

A command's adapter (`formats.adapters`) turns its own results into `Case`s (one per
config, class or worker pair: a JUnit test case), each holding `Finding`s; the
`github`, `sarif` and `junit` writers read only these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Severity: TypeAlias = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Place:
    """A file, and a line of it when known."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


def naming_origin(message: str, value_from: Place | None) -> str:
    """`message`, and where the value it is about is written when that is another file."""
    return message if value_from is None else f"{message} (value inherited from {value_from})"


@dataclass(frozen=True)
class Finding:
    """One thing a command found: its rule, how bad, what, and where when known.

    `file` is the subject the user ran the command on (for `check`, the config); where
    the value a finding is about is written in another file (a `defaults:` parent),
    `value_from` says where, and each format chooses how to show both."""

    rule: str
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    title: str = ""
    value_from: Place | None = None

    @property
    def heading(self) -> str:
        """The annotation's title: given, else the rule."""
        return self.title or self.rule

    @property
    def text(self) -> str:
        """The message for a format with one place per finding: naming `value_from`."""
        return naming_origin(self.message, self.value_from)


@dataclass
class Case:
    """One config, class or worker pair the command judged."""

    name: str
    suite: str  # the command: check, verify, migrate, ...
    findings: list[Finding] = field(default_factory=list)
    # Set when the subject could not be judged at all (exit code 2): a JUnit error.
    error: str | None = None
    file: str | None = None  # the subject's own file, when it has one
    notes: list[str] = field(default_factory=list)  # skipped rules, inferred options

    @property
    def failed(self) -> bool:
        return self.error is not None or any(f.severity == "error" for f in self.findings)

    def every(self) -> list[Finding]:
        """The findings, and the reason it could not be judged as one more (`unusable`)."""
        if self.error is None:
            return list(self.findings)
        return [Finding("unusable", "error", self.error, self.file), *self.findings]


@dataclass
class Results:
    """What one run of a command found, in the order it judged its subjects."""

    command: str
    cases: list[Case] = field(default_factory=list)
    # The NeMo-RL revision judged (`Revision.as_json()`), where the command judges one.
    nemo_rl: dict[str, Any] | None = None

    def findings(self) -> list[Finding]:
        return [f for case in self.cases for f in case.findings]

    def annotations(self) -> list[Finding]:
        """Every case's findings (`Case.every`), each distinct one once: a cause that
        fails several cases is one annotation."""
        return list(dict.fromkeys(f for case in self.cases for f in case.every()))
