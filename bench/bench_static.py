"""Static checking: wall time of pyrefly and of mypy (cold cache) over the repository,
and of `check --static` over examples/configs.

Both checkers run as `make typecheck` runs them (the file lists come from pyproject.toml);
mypy gets a fresh temporary `--cache-dir`, so it analyses everything, stubs included.
Each is run once, side by side: a cold mypy run is the expensive figure and is not
repeated. `check --static` (every config rule, then one pyrefly run on a generated probe)
alternates with `pyrefly check` of the repository, medians of a few runs each; goal:
at most 3x one `pyrefly check` (issue 14). Run with `python -m bench.bench_static`.
"""

from __future__ import annotations

import re
import statistics
import tempfile

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child

# `check --static` against `pyrefly check` of the repository, alternating, medians.
STATIC_CHECK_RUNS = 3
STATIC_CHECK_GOAL = 3.0
EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "configs").glob("*.yaml"))

_VERDICT = re.compile(r"INFO \d+ error|Found \d+ error|Success:")


def _summary(text: str) -> str:
    """The checker's verdict line (pyrefly: `INFO N errors`, mypy: `Found ...`/`Success`)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    verdicts = [line for line in lines if _VERDICT.match(line)]
    return verdicts[-1] if verdicts else (lines[-1] if lines else "")


def main() -> dict[str, object]:
    """Run pyrefly and a cold mypy over the repository; print and return the figures."""
    env = child_env()
    pyrefly = run_child([str(VENV_BIN / "pyrefly"), "check"], env=env, cwd=REPO, timeout_s=300)
    with tempfile.TemporaryDirectory(prefix="bench-mypy-cache-") as cache:
        mypy = run_child([str(VENV_BIN / "mypy"), "--cache-dir", cache], env=env, cwd=REPO,
                         timeout_s=400)
    rows = {
        "pyrefly check": {
            "wall_s": round(pyrefly.wall_s, 2), "max_rss_mb": round(pyrefly.max_rss_mb, 1),
            "exit": pyrefly.returncode, "says": _summary(pyrefly.stderr + pyrefly.stdout),
        },
        "mypy (cold cache)": {
            "wall_s": round(mypy.wall_s, 2), "max_rss_mb": round(mypy.max_rss_mb, 1),
            "exit": mypy.returncode, "says": _summary(mypy.stdout + mypy.stderr),
        },
    }
    speedup = round(ratio(mypy.wall_s, pyrefly.wall_s), 1)
    print("Static checking of the repository (one run each)")
    print_table(
        ("checker", "wall s", "peak RSS MB", "exit", "verdict"),
        [(name, r["wall_s"], r["max_rss_mb"], r["exit"], r["says"]) for name, r in rows.items()],
    )
    print(f"mypy cold / pyrefly: {speedup}x")
    static_check = _static_check_vs_pyrefly()
    return {"name": "static", "rows": rows, "mypy_over_pyrefly": speedup, **static_check}


def _static_check_vs_pyrefly() -> dict[str, object]:
    """`check --static examples/configs/*.yaml` against one `pyrefly check`, same run."""
    env = child_env()
    repo_runs, check_runs, exits = [], [], set()
    for _ in range(STATIC_CHECK_RUNS):
        repo = run_child([str(VENV_BIN / "pyrefly"), "check"], env=env, cwd=REPO, timeout_s=300)
        check = run_child(
            [str(VENV_BIN / "nemo-rl-workers"), "check", "--static", *EXAMPLES],
            env=env, cwd=REPO, timeout_s=300,
        )
        repo_runs.append(repo.wall_s)
        check_runs.append(check.wall_s)
        exits.add(check.returncode)  # 1: mismatched_quant.yaml is rejected by R5, by design
    repo_s, check_s = statistics.median(repo_runs), statistics.median(check_runs)
    cost = round(ratio(check_s, repo_s), 2)
    print()
    print(
        f"check --static over examples/configs ({len(EXAMPLES)} configs) vs pyrefly check of "
        f"the repository (median of {STATIC_CHECK_RUNS}, alternating; goal <= "
        f"{STATIC_CHECK_GOAL}x)"
    )
    print_table(
        ("command", "median wall s", "runs s"),
        [
            ("pyrefly check (repository)", round(repo_s, 2),
             " ".join(f"{x:.2f}" for x in repo_runs)),
            ("check --static examples/configs", round(check_s, 2),
             " ".join(f"{x:.2f}" for x in check_runs)),
        ],
    )
    met = "goal met" if cost <= STATIC_CHECK_GOAL else "GOAL MISSED"
    print(f"check --static / pyrefly check: {cost}x (exit codes {sorted(exits)}); {met}")
    return {"static_check_over_pyrefly": cost, "static_check_s": check_s, "pyrefly_s": repo_s}


if __name__ == "__main__":
    main()
