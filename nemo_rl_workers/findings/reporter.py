"""What a command prints, through one object: its lines on stdout, its one-line errors on
stderr, its JSON and its structured formats (`--output-format github|sarif|junit`).

The streams it is given are the dispatcher's `SafeStream`s (`findings.streams`): escaping,
redaction and write failures are theirs; the shape of a line is the reporter's. An error
is one line, `PREFIX MESSAGE`, the message's control characters escaped (`one_line`), so
a file name or a value can never split it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE

if TYPE_CHECKING:
    from nemo_rl_workers.findings.results import Results

PROGRAM = "nemo-rl-workers"


@dataclass(frozen=True)
class Reporter:
    """A command's two streams, and the prefix of its error lines."""

    out: TextIO
    err: TextIO
    prefix: str = f"{PROGRAM}:"

    def of(self, command: str) -> Reporter:
        """The same streams, error lines naming `command` (`nemo-rl-workers: audit: ...`)."""
        return dataclasses.replace(self, prefix=f"{PROGRAM}: {command}:")

    def prefixed(self, prefix: str) -> Reporter:
        """The same streams, error lines starting with `prefix` as given."""
        return dataclasses.replace(self, prefix=prefix)

    # ------------------------------------------------------------------------- stdout

    def line(self, text: str = "") -> None:
        """One line of the command's output, as rendered."""
        print(text, file=self.out)

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def write(self, text: str) -> None:
        """Output already cut into lines (a diff, a document in a structured format)."""
        self.out.write(text)

    def json(self, payload: Any) -> None:
        """One JSON document on stdout."""
        json.dump(payload, self.out, indent=2)
        self.out.write("\n")

    def results(self, results: Results, fmt: str) -> bool:
        """`results` in the structured format `fmt`; False after one line when the format's
        library is not installed here."""
        from nemo_rl_workers.findings.formats import FormatUnavailable, render

        try:
            text = render(results, fmt)
        except FormatUnavailable as missing:
            self.prefixed(f"{PROGRAM}:").notice(str(missing))
            return False
        self.write(text)
        return True

    # ------------------------------------------------------------------------- stderr

    def err_line(self, text: str) -> None:
        """One line on stderr, as rendered (a warning that names its own file and line)."""
        print(text, file=self.err)

    def notice(self, message: str) -> None:
        """`PREFIX MESSAGE` on stderr: the one rendering of a line about the run (why the
        input is unusable, a warning, a file written), never split."""
        self.err_line(f"{self.prefix} {one_line(message)}")

    def unusable(self, message: str) -> int:
        """The line saying why the input cannot be used, and the exit code that goes with it."""
        self.notice(message)
        return EXIT_UNUSABLE
