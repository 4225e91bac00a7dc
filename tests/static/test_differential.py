"""The runtime verifier, mypy and pyrefly agree on every extension class, or say why not.

`differential_expectations.CASES` holds each class's expected verdicts; the static
ones are read from one mypy run and one pyrefly run over a marker-free copy of
`differential_cases.py` (see conftest.py).
"""

from __future__ import annotations

import re

import pytest

from contracts.verify import check
from tests.static.checkers import StaticRun, read_markers
from tests.static.conftest import DIFFERENTIAL
from tests.static.differential_expectations import CASES, MYPY_CODE, PYREFLY_CODE, Case

# `_<name>: type[<Protocol>] = <Class>`: the line each checker judges a case by.
ASSIGNMENT = re.compile(r"^_\w+: type\[(?P<protocol>\w+)\] = (?P<cls>\w+)\b", re.M)
SOURCE = DIFFERENTIAL.read_text()


def _lines() -> dict[str, tuple[int, str]]:
    """Class name -> (line number, Protocol name) of its assignment line."""
    found: dict[str, tuple[int, str]] = {}
    for match in ASSIGNMENT.finditer(SOURCE):
        line = SOURCE.count("\n", 0, match.start()) + 1
        assert match["cls"] not in found, f"{match['cls']} is assigned twice"
        found[match["cls"]] = (line, match["protocol"])
    return found


LINES = _lines()


def _ids(case: Case) -> str:
    return case.name


def test_every_case_has_one_assignment_line_and_one_expectation() -> None:
    assert len(CASES) >= 30
    names = [case.name for case in CASES]
    assert len(set(names)) == len(names)
    assert set(names) == set(LINES)
    for case in CASES:
        assert LINES[case.name][1] == case.protocol.__name__, case.name


def test_cases_cover_accepting_and_rejecting_each_rule() -> None:
    rules = {rule for case in CASES for rule, _ in case.runtime}
    # "kind" (a Protocol class/static method) and data members: see the generated pairs.
    every = {"missing", "not-callable", "async", "shape", "annotation", "base", "init"}
    assert rules >= every
    assert sum(not case.runtime_rejects for case in CASES) >= 10
    assert any(case.skips for case in CASES)


def test_disagreements_are_documented() -> None:
    for case in CASES:
        agree = case.runtime_rejects == case.mypy == case.pyrefly
        assert agree or case.why, f"{case.name}: the verdicts differ; say why in `why`"
        # Without the named stricter rules the verdict is the spec's: mypy's, or explained.
        report = check(case.cls, case.protocol, base=case.base, init_call=case.init_call)
        assert report.spec_ok != case.mypy or case.why, case.name


def test_markers_in_the_module_match_the_table() -> None:
    # `make typecheck` then checks the same static verdicts as this test.
    markers = read_markers(SOURCE)
    for case in CASES:
        line = LINES[case.name][0]
        assert markers.mypy.get(line) == ({MYPY_CODE} if case.mypy else None), case.name
        assert markers.pyrefly.get(line) == ({PYREFLY_CODE} if case.pyrefly else None), case.name


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_runtime_verdict(case: Case) -> None:
    report = check(case.cls, case.protocol, base=case.base, init_call=case.init_call)
    found = {(v.rule, v.member) for v in report.violations}
    assert found == case.runtime, str(report)
    assert report.ok == (not case.runtime_rejects)
    assert bool(report.skipped) == case.skips, report.skipped
    for violation in report.violations:
        assert violation.cls.endswith(f".{case.name}")
        assert violation.protocol == case.protocol.__name__


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_mypy_verdict(case: Case, static_run: StaticRun) -> None:
    line = LINES[case.name][0]
    codes = static_run.mypy.get(DIFFERENTIAL.name, {}).get(line, frozenset())
    assert codes == (frozenset({MYPY_CODE}) if case.mypy else frozenset())


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_pyrefly_verdict(case: Case, static_run: StaticRun) -> None:
    line = LINES[case.name][0]
    codes = static_run.pyrefly.get(DIFFERENTIAL.name, {}).get(line, frozenset())
    assert codes == (frozenset({PYREFLY_CODE}) if case.pyrefly else frozenset())


def test_no_other_line_of_the_module_has_errors(static_run: StaticRun) -> None:
    case_lines = {line for line, _ in LINES.values()}
    for checker in (static_run.mypy, static_run.pyrefly):
        stray = set(checker.get(DIFFERENTIAL.name, {})) - case_lines
        assert not stray, sorted(stray)
