"""The static path (`verify --static`) agrees with mypy and pyrefly on every differential
case, and where it differs from the runtime verifier, the case says why."""

from __future__ import annotations

import pytest

from tests.static.static_split import Row, rows, table


@pytest.fixture(scope="module")
def split() -> list[Row]:
    found = rows()
    print("\n" + table(found))  # what each side sees, per case (pytest -s shows it)
    return found


def _members_rejected(row: Row, checker: str) -> bool:
    report = row.pyrefly if checker == "pyrefly" else row.mypy
    assert report.unusable is None, report.unusable
    return any(f.rule == "static" for f in report.findings)


@pytest.mark.slow
def test_static_verdict_is_the_checkers_verdict(split: list[Row]) -> None:
    for row in split:
        assert _members_rejected(row, "pyrefly") == row.case.pyrefly, row.case.name
        assert _members_rejected(row, "mypy") == row.case.mypy, row.case.name


@pytest.mark.slow
def test_every_static_line_names_the_class_protocol_and_member(split: list[Row]) -> None:
    for row in split:
        for report in (row.pyrefly, row.mypy):
            for finding, line in zip(report.findings, report.lines(), strict=True):
                head = f"{report.subject.fqn} does not implement {row.case.protocol.__name__}"
                assert line.startswith(head), line
                if finding.rule == "static" and finding.member:
                    assert line.startswith(f"{head}.{finding.member}: "), line


@pytest.mark.slow
def test_the_base_is_seen_statically_too(split: list[Row]) -> None:
    for row in split:
        if row.case.base is None:
            continue
        for report in (row.pyrefly, row.mypy):
            static_base = any(f.rule == "base" for f in report.findings)
            assert static_base == ("base" in row.runtime), row.case.name


@pytest.mark.slow
def test_where_a_member_is_rejected_by_pyrefly_it_is_named(split: list[Row]) -> None:
    for row in split:
        members = {f.member for f in row.pyrefly.findings if f.rule == "static"}
        runtime_members = {r.split(":", 1)[1] for r in row.runtime if ":" in r}
        if row.case.pyrefly and row.case.runtime_rejects:
            assert members & runtime_members, (row.case.name, members, runtime_members)
