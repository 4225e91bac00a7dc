"""What the runtime verifier and the static path each see, case by case.

    python -m tests.static.static_split

runs `contracts.check` and `nemo_rl_workers.checks.static.static_check.judge` (pyrefly, then mypy)
over every class of the differential suite and prints one row per case: the rules the
runtime reports, and the members each checker rejects from source.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.verify import check
from nemo_rl_workers.checks.static.static_check import StaticReport, Subject, judge
from tests.static.differential_expectations import CASES, Case


def _fqn(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclass(frozen=True)
class Row:
    case: Case
    runtime: frozenset[str]  # "rule:member"
    pyrefly: StaticReport
    mypy: StaticReport

    @staticmethod
    def seen(report: StaticReport) -> str:
        if report.unusable is not None:
            return f"unusable ({report.unusable})"
        found = sorted({f"{f.rule}:{f.member}" if f.member else f.rule for f in report.findings})
        return ", ".join(found) or "ok"


def rows() -> list[Row]:
    subjects = [
        Subject(_fqn(case.cls), case.protocol.__name__, _fqn(case.base) if case.base else None)
        for case in CASES
    ]
    by_checker = {checker: judge(subjects, checker=checker) for checker in ("pyrefly", "mypy")}
    out = []
    for index, case in enumerate(CASES):
        runtime = check(case.cls, case.protocol, base=case.base, init_call=case.init_call)
        seen = frozenset(f"{v.rule}:{v.member}" if v.member else v.rule for v in runtime.violations)
        out.append(Row(case, seen, by_checker["pyrefly"][index], by_checker["mypy"][index]))
    return out


def table(found: list[Row]) -> str:
    header = ("case", "protocol", "runtime", "static pyrefly", "static mypy")
    lines = [
        (r.case.name, r.case.protocol.__name__, ", ".join(sorted(r.runtime)) or "ok",
         Row.seen(r.pyrefly), Row.seen(r.mypy))
        for r in found
    ]
    widths = [max(len(x[i]) for x in [header, *lines]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *lines]
    )


if __name__ == "__main__":
    print(table(rows()))
