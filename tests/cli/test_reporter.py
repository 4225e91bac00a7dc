"""The one reporter every command prints through (issue 45, item 5): a line about the run
is one line, prefixed with the program (and the command), whatever the message holds."""

from __future__ import annotations

import io
import json
import sys

import pytest

from nemo_rl_workers.findings.exit_codes import EXIT_UNUSABLE
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.findings.results import Results


def _streams() -> tuple[Reporter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Reporter(out, err), out, err


def test_a_notice_is_one_line_naming_the_program_and_the_command() -> None:
    say, out, err = _streams()
    assert say.of("audit").unusable("cannot read a\nb.yaml") == EXIT_UNUSABLE
    say.notice("tab\there")
    assert (out.getvalue(), err.getvalue()) == (
        "", "nemo-rl-workers: audit: cannot read a\\nb.yaml\nnemo-rl-workers: tab\\there\n")


def test_lines_and_json_go_to_stdout_as_rendered() -> None:
    say, out, err = _streams()
    say.line("policy: ok")
    say.json({"ok": True})
    assert err.getvalue() == ""
    first, rest = out.getvalue().split("\n", 1)
    assert first == "policy: ok" and json.loads(rest) == {"ok": True}


def test_a_format_without_its_library_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injected on purpose: the SARIF library made unimportable (a light install)."""
    monkeypatch.setitem(sys.modules, "pydantic_sarif", None)
    say, out, err = _streams()
    assert not say.of("audit").results(Results(command="check"), "sarif")
    assert out.getvalue() == ""
    assert err.getvalue().startswith("nemo-rl-workers: --output-format sarif needs ")
    assert len(err.getvalue().splitlines()) == 1
