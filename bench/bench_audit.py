"""`audit` over the NeMo-RL corpus tree against one `pyrefly check` of the same tree.

Both run as a user runs them, in child processes measured alone (wall time, CPU time and
peak RSS through bench_support's launcher), alternating, medians of a few runs; goal:
`nemo-rl-workers audit --nemo-rl <corpus>` takes at most 1.0x one `pyrefly check` of
the corpus's `nemo_rl` package (issue 19). pyrefly runs from an empty folder, so no
project config applies; the corpus's heavy imports are not installed for either.
In-process, tracemalloc gives the audit's own peak of Python allocations (its model).
Run with `python -m bench.bench_audit`.
"""

from __future__ import annotations

import statistics
import tempfile
import tracemalloc
from pathlib import Path

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child

CORPUS = (REPO / ".." / "shared" / "corpus" / "nemo-rl").resolve()
RUNS = 3
GOAL = 1.0


def _model_peak_mb() -> tuple[float, int]:
    """tracemalloc's peak while one audit runs in this process, and its finding count."""
    from nemo_rl_workers.checks.audit import audit

    tracemalloc.start()
    try:
        report = audit(CORPUS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20, len(report.findings)


def main() -> dict[str, object]:
    if not (CORPUS / "nemo_rl").is_dir():
        print(f"corpus absent ({CORPUS}): skipped")
        return {"name": "audit", "skipped": True}
    env = child_env(NO_COLOR="1")
    # Cold: `--no-cache`, the analysis itself (the goal); cached: what a second run on an
    # unchanged tree costs (one row, for reference).
    audit_cmd = [str(VENV_BIN / "nemo-rl-workers"), "audit", "--nemo-rl", str(CORPUS),
                 "--no-cache"]
    pyrefly_cmd = [str(VENV_BIN / "pyrefly"), "check", str(CORPUS / "nemo_rl"),
                   "--output-format", "min-text"]
    audits, pyreflys, cached = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as empty:
        for _ in range(RUNS):
            pyreflys.append(run_child(pyrefly_cmd, env=env, cwd=Path(empty), timeout_s=600))
            audits.append(run_child(audit_cmd, env=env, cwd=Path(empty), timeout_s=600))
        for _ in range(2):  # the first fills the cache
            cached.append(run_child(audit_cmd[:-1], env=env, cwd=Path(empty), timeout_s=600))
    summary = audits[-1].stdout.strip().splitlines()[-1] if audits[-1].stdout.strip() else ""
    audit_s = statistics.median(r.wall_s for r in audits)
    pyrefly_s = statistics.median(r.wall_s for r in pyreflys)
    audit_cpu = statistics.median(r.cpu_s for r in audits)
    pyrefly_cpu = statistics.median(r.cpu_s for r in pyreflys)
    audit_rss = max(r.max_rss_mb for r in audits)
    pyrefly_rss = max(r.max_rss_mb for r in pyreflys)
    model_mb, findings = _model_peak_mb()
    cost = round(ratio(audit_s, pyrefly_s), 2)
    print(f"audit of the corpus tree vs pyrefly check of its nemo_rl package (median of {RUNS}, "
          f"alternating; goal <= {GOAL}x, cold)")
    print_table(
        ("command", "median wall s", "median CPU s", "peak RSS MB", "runs wall s", "exit"),
        [
            ("pyrefly check nemo_rl/", round(pyrefly_s, 2), round(pyrefly_cpu, 2),
             round(pyrefly_rss, 1), " ".join(f"{r.wall_s:.2f}" for r in pyreflys),
             pyreflys[-1].returncode),
            ("nemo-rl-workers audit --no-cache", round(audit_s, 2), round(audit_cpu, 2),
             round(audit_rss, 1), " ".join(f"{r.wall_s:.2f}" for r in audits),
             audits[-1].returncode),
            ("audit, cached (2nd run)", round(cached[-1].wall_s, 2),
             round(cached[-1].cpu_s, 2), round(cached[-1].max_rss_mb, 1),
             " ".join(f"{r.wall_s:.2f}" for r in cached), cached[-1].returncode),
        ],
    )
    print(f"audit's own Python allocations (tracemalloc peak, in process): {model_mb:.1f} MB")
    print(f"audit says: {summary}")
    met = "goal met" if cost <= GOAL else "GOAL MISSED"
    print(f"audit / pyrefly check: {cost}x wall, "
          f"{ratio(audit_cpu, pyrefly_cpu):.2f}x CPU; {met}")
    return {"name": "audit", "audit_over_pyrefly": cost, "audit_s": audit_s,
            "pyrefly_s": pyrefly_s, "audit_rss_mb": audit_rss, "pyrefly_rss_mb": pyrefly_rss,
            "model_peak_mb": model_mb, "findings": findings}


if __name__ == "__main__":
    main()
