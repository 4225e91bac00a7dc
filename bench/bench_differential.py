"""The full generated differential run: `contracts.check` against mypy and pyrefly.

Writes every generated Protocol/class pair (over 1,000, see tests/static/generator.py)
as modules, runs mypy once and pyrefly once over them, and prints agreement per
category and every disagreement with its explanation. Run with
`python -m bench.bench_differential`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tests.static.generator import BLIND_SPOTS, all_pairs, judge, summary


def main() -> dict[str, object]:
    pairs = all_pairs()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gen-pairs-") as tmp:
        verdicts = judge(pairs, Path(tmp))
    seconds = time.perf_counter() - start
    print(summary(verdicts))
    n = len(verdicts)
    figures = {
        "pairs": n,
        "agree_mypy": round(sum(v.runtime_rejects == v.mypy_rejects for v in verdicts) / n, 4),
        "agree_pyrefly": round(
            sum(v.runtime_rejects == v.pyrefly_rejects for v in verdicts) / n, 4
        ),
        "agree_reference": round(
            sum(v.runtime_rejects == v.reference_rejects for v in verdicts) / n, 4
        ),
        "false_accepts_outside_blind_spots": sum(
            v.reference_rejects and not v.runtime_rejects and v.pair.category not in BLIND_SPOTS
            for v in verdicts
        ),
        "seconds": round(seconds, 1),
    }
    print(f"\n{n} pairs judged by mypy, pyrefly and the verifier in {seconds:.1f} s")
    return {"name": "differential", "summary": figures}


if __name__ == "__main__":
    main()
