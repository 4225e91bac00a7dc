"""Static checking: wall time of pyrefly and of mypy (cold cache) over the repository.

Both run as `make typecheck` runs them (the file lists come from pyproject.toml); mypy
gets a fresh temporary `--cache-dir`, so it analyses everything, stubs included. Each is
run once, side by side: a cold mypy run is the expensive figure and is not repeated.
Run with `python -m bench.bench_static`.
"""

from __future__ import annotations

import re
import tempfile

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child

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
    return {"name": "static", "rows": rows, "mypy_over_pyrefly": speedup}


if __name__ == "__main__":
    main()
