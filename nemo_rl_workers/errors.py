"""The one exception type of the driver side: every rejection carries its problems.

A problem names the config path, the expected and the given value, and reads as
one actionable sentence. A check collects every problem it finds and raises
them together, so a user fixes a config in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config, located by its dotted path."""

    path: str
    expected: str
    given: str
    message: str
    rule: str = ""
    file: str | None = None
    line: int | None = None

    def located(self, file: str | None, line: int | None = None) -> Problem:
        """The same problem, attributed to a file (and a line, when known)."""
        return Problem(self.path, self.expected, self.given, self.message, self.rule, file, line)

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        return one_line(f"{where}{self.message}")


class WorkerConfigError(ValueError):
    """A config was rejected; `problems` lists every reason, one line each."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("WorkerConfigError needs at least one problem")
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def path(self) -> str:
        return self.problems[0].path

    @property
    def expected(self) -> str:
        return self.problems[0].expected

    @property
    def given(self) -> str:
        return self.problems[0].given


def raise_if_any(problems: Iterable[Problem]) -> None:
    """Raise one WorkerConfigError carrying all `problems`, if there are any."""
    found = tuple(problems)
    if found:
        raise WorkerConfigError(found)


_CONTROL = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
}


def one_line(text: str) -> str:
    """`text` safe for one terminal line: newlines and other control characters (from keys,
    file names or values) escaped as `\\n`-style sequences, so they can neither split a
    line nor drive the terminal."""
    if text.isprintable():
        return text
    return text.translate(_CONTROL).replace("\\x0a", "\\n").replace("\\x09", "\\t")


def show(value: object) -> str:
    """A config value as a user would write it, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # Quoted when it would not read as itself: empty, padded, or holding a line break or
        # another control character (which would also split the one-line message).
        plain = value != "" and value == value.strip() and value.isprintable()
        return value if plain else repr(value)
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4,300-digit limit (a long hex literal)
        return f"a {type(value).__name__} holding an integer too large to print"
    return text if len(text) <= 120 else text[:117] + "..."
