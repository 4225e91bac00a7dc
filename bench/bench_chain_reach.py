"""What the chains of resolved calls (issue 34) cost a config-scoped audit of the corpus.

`check RECIPE` (without `--no-verify`) runs the audit once per process with `origins`,
and walks back from each reachable finding's driver call along calls that resolve
(`audit.call_chain`). In process, on the 2026-08 corpus: the audit as `audit` runs it,
as `check` runs it, and the part of the latter spent on the chains (medians of a few
runs, side by side), with how many findings got a chain. Run with
`python -m bench.bench_chain_reach`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.bench_support import REPO, print_table, ratio
from nemo_rl_workers.checks.audit.call_chain import CallChains
from nemo_rl_workers.checks.audit.rules import Finding

CORPUS = (REPO / ".." / "shared" / "corpus" / "nemo-rl").resolve()
RUNS = 3


def _timed(origins: bool) -> tuple[float, float, int, int]:
    """(audit s, chains s, findings walked, findings with a chain) of one audit."""
    from nemo_rl_workers.checks.audit import run

    spent: list[float] = []
    counts: list[tuple[int, int]] = []
    original = run._with_chains

    def measured(findings: list[Finding], chains: CallChains) -> list[Finding]:
        start = time.perf_counter()
        out = original(findings, chains)
        spent.append(time.perf_counter() - start)
        counts.append((len(out), sum(1 for f in out if f.chains)))
        return out

    run._with_chains = measured  # timed in place, restored below
    try:
        start = time.perf_counter()
        run.audit(Path(CORPUS), origins=origins)
        total = time.perf_counter() - start
    finally:
        run._with_chains = original
    walked, chained = counts[0] if counts else (0, 0)
    return total, sum(spent), walked, chained


def main() -> dict[str, object]:
    if not (CORPUS / "nemo_rl").is_dir():
        print(f"corpus absent ({CORPUS}): skipped")
        return {"name": "chain_reach", "skipped": True}
    plain = [_timed(False) for _ in range(RUNS)]
    scoped = [_timed(True) for _ in range(RUNS)]
    plain_s = statistics.median(p[0] for p in plain)
    scoped_s = statistics.median(s[0] for s in scoped)
    chains_s = statistics.median(s[1] for s in scoped)
    walked, chained = scoped[-1][2], scoped[-1][3]
    print(f"audit of the corpus tree, in process (median of {RUNS})")
    print_table(["run", "wall s", "chains s", "chains / run"], [
        ["audit (as `audit` runs it)", f"{plain_s:.2f}", "-", "-"],
        ["audit with origins (as `check RECIPE` runs it)", f"{scoped_s:.2f}",
         f"{chains_s:.2f}", f"{ratio(chains_s, scoped_s):.2f}"],
    ])
    print(f"findings walked back: {walked}; with a chain of resolved calls from an entry: "
          f"{chained}")
    print(f"check-scoped audit / plain audit: {ratio(scoped_s, plain_s):.2f}x wall")
    return {"name": "chain_reach", "plain_s": plain_s, "scoped_s": scoped_s,
            "chains_s": chains_s, "walked": walked, "chained": chained}


if __name__ == "__main__":
    main()
