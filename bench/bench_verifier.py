"""What `contracts.verify` costs and finds, next to beartype's and typeguard's class checks.

For each worker class (one good per Protocol family, then one broken per rule):
median cost of a cold `check` (cache cleared), of a cached one, of
`beartype.door.is_bearable(cls, type[P])` and of `typeguard.check_type(cls, type[P])`,
and what each reports. Run with `python -m bench.bench_verifier`.
"""

from __future__ import annotations

import statistics
import time
import types
from collections.abc import Callable
from dataclasses import asdict, dataclass

import typeguard
from beartype.door import is_bearable

from contracts import (
    POLICY_INIT,
    InitCall,
    QuantAsyncGenerationWorker,
    QuantPolicyWorker,
    check,
    clear_cache,
)
from contracts.verify import as_hint
from tests.contracts import samples

RUNS = 7
CACHED_LOOPS = 2000
GATE_LOOPS = 200


@dataclass(frozen=True)
class Case:
    name: str
    cls: type
    protocol: type
    expected: str  # the rules a complete check should name
    init_call: InitCall | None = None


CASES = (
    Case("good policy", samples.QuantPolicy, QuantPolicyWorker, "-", POLICY_INIT),
    Case("good async generation", samples.StreamingGeneration, QuantAsyncGenerationWorker, "-"),
    Case("missing", samples.Policy, QuantPolicyWorker, "missing"),
    Case("not-callable", samples.StatsNotCallable, QuantPolicyWorker, "not-callable"),
    Case("static satisfies", samples.StaticStats, QuantPolicyWorker, "-"),
    Case("kind", samples.InstanceCreate, samples.MadeByClass, "kind"),
    Case("async", samples.AsyncStats, QuantPolicyWorker, "async,annotation"),
    Case("protocol subclass", samples.SubclassForgetsStats, QuantPolicyWorker, "missing"),
    Case("shape", samples.StatsWithRequiredArg, QuantPolicyWorker, "shape"),
    Case("annotation", samples.StatsAsDict, QuantPolicyWorker, "annotation"),
    Case("init", samples.NoRankInit, QuantPolicyWorker, "init", POLICY_INIT),
    Case(
        "four problems",
        samples.FourProblems,
        QuantPolicyWorker,
        "not-callable,shape,async,annotation,missing",
    ),
)


@dataclass(frozen=True)
class Row:
    case: str
    cls: str
    expected: str
    verify_cold_us: float
    verify_cached_us: float
    beartype_us: float
    typeguard_us: float
    cold_vs_beartype: float
    cached_vs_beartype: float
    verify_found: str
    verify_problems: int
    beartype_found: str
    typeguard_found: str


def _median_us(
    run: Callable[[], object], loops: int, before: Callable[[], None] | None = None
) -> float:
    """Median over RUNS of the mean cost of one call, in microseconds."""
    samples_us: list[float] = []
    for _ in range(RUNS):
        if before is not None:
            before()
        start = time.perf_counter_ns()
        for _ in range(loops):
            run()
        samples_us.append((time.perf_counter_ns() - start) / loops / 1000)
    return statistics.median(samples_us)


def _typeguard_verdict(cls: type, hint: object) -> str:
    try:
        typeguard.check_type(cls, hint)
    except typeguard.TypeCheckError:
        return "fail (1)"
    return "pass"


def measure(case: Case) -> Row:
    hint = as_hint(types.GenericAlias(type, (case.protocol,)))  # type[P], built at runtime

    def verify_once() -> object:
        return check(case.cls, case.protocol, init_call=case.init_call)

    def gate() -> object:
        return is_bearable(case.cls, hint)

    def typeguard_once() -> object:
        return _typeguard_verdict(case.cls, hint)

    cold = _median_us(verify_once, 1, before=clear_cache)
    verify_once()  # fill the cache
    cached = _median_us(verify_once, CACHED_LOOPS)
    bear = _median_us(gate, GATE_LOOPS)
    guard = _median_us(typeguard_once, GATE_LOOPS)
    report = check(case.cls, case.protocol, init_call=case.init_call)
    rules = ",".join(v.rule for v in report.violations)
    return Row(
        case=case.name,
        cls=case.cls.__name__,
        expected=case.expected,
        verify_cold_us=round(cold, 1),
        verify_cached_us=round(cached, 2),
        beartype_us=round(bear, 2),
        typeguard_us=round(guard, 1),
        cold_vs_beartype=round(cold / bear, 1),
        cached_vs_beartype=round(cached / bear, 2),
        verify_found=f"fail ({rules})" if rules else "pass",
        verify_problems=len(report.violations),
        beartype_found="pass" if is_bearable(case.cls, hint) else "fail (1)",
        typeguard_found=_typeguard_verdict(case.cls, hint),
    )


COLUMNS = (
    ("case", "case"),
    ("expected", "expected"),
    ("verify_cold_us", "verify cold us"),
    ("verify_cached_us", "cached us"),
    ("beartype_us", "is_bearable us"),
    ("typeguard_us", "typeguard us"),
    ("cold_vs_beartype", "cold/bear"),
    ("cached_vs_beartype", "cached/bear"),
    ("verify_found", "verify finds"),
    ("beartype_found", "is_bearable finds"),
    ("typeguard_found", "typeguard finds"),
)


def table(rows: list[Row]) -> str:
    cells = [[label for _, label in COLUMNS]]
    cells += [[str(asdict(row)[key]) for key, _ in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> dict[str, object]:
    """Measure every case, print the table, and return the figures."""
    rows = [measure(case) for case in CASES]
    print(f"contracts.verify vs beartype / typeguard class checks (median of {RUNS} runs)")
    print(table(rows))
    bad = [r for r in rows if r.expected != "-"]
    summary = {
        "bad_classes": len(bad),
        "verify_caught": sum(r.verify_problems > 0 for r in bad),
        "verify_named_expected_rules": sum(r.verify_found == f"fail ({r.expected})" for r in bad),
        "beartype_caught": sum(r.beartype_found != "pass" for r in bad),
        "typeguard_caught": sum(r.typeguard_found != "pass" for r in bad),
        "max_cached_us": max(r.verify_cached_us for r in rows),
        "max_cold_us": max(r.verify_cold_us for r in rows),
    }
    print(
        f"\nbroken classes caught: verify {summary['verify_caught']}/{len(bad)} "
        f"(each with its rule: {summary['verify_named_expected_rules']}), "
        f"is_bearable {summary['beartype_caught']}/{len(bad)}, "
        f"typeguard {summary['typeguard_caught']}/{len(bad)}; "
        f"slowest cached verify {summary['max_cached_us']} us (goal 5), "
        f"slowest cold verify {summary['max_cold_us']} us (goal 1000)"
    )
    return {"name": "verifier", "runs": RUNS, "rows": [asdict(r) for r in rows], "summary": summary}


if __name__ == "__main__":
    main()
