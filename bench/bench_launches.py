"""Every launch of upstream's nightly list judged, against one `pyrefly check` of the tree.

`nemo-rl-workers check --no-verify tests/test_suites/nightly.txt`, run from the corpus
tree's root as a maintainer runs it, judges each suite script the list names as launched
(its recipe, entry script, overrides and exported variables: issue 44). It runs in a child
process measured alone (wall, CPU, peak RSS), alternating with one `pyrefly check` of the
tree's `nemo_rl` package (from an empty folder, so no project config applies); medians of a
few runs, cold (`--no-cache`) and then with the tree model's cache warm. The issue asks
for the figure, with no goal; the ratio is reported. Run with
`python -m bench.bench_launches`.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench.bench_support import REPO, VENV_BIN, child_env, print_table, ratio, run_child

CORPUS = (REPO / ".." / "shared" / "corpus" / "nemo-rl").resolve()
NIGHTLY = "tests/test_suites/nightly.txt"
RUNS = 3


def main() -> dict[str, object]:
    if not (CORPUS / NIGHTLY).is_file():
        print(f"corpus absent ({CORPUS / NIGHTLY}): skipped")
        return {"name": "launches", "skipped": True}
    env = child_env(NO_COLOR="1")
    check = [str(VENV_BIN / "nemo-rl-workers"), "check", "--no-verify", "--nemo-rl", ".",
             NIGHTLY]
    pyrefly = [str(VENV_BIN / "pyrefly"), "check", str(CORPUS / "nemo_rl"),
               "--output-format", "min-text"]
    cold, pyreflys, warm = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-launches-") as folder:
        empty = Path(folder) / "empty"
        empty.mkdir()
        cache = ["--cache-dir", str(Path(folder) / "cache")]
        for _ in range(RUNS):
            pyreflys.append(run_child(pyrefly, env=env, cwd=empty, timeout_s=600))
            cold.append(run_child([*check, "--no-cache"], env=env, cwd=CORPUS, timeout_s=900))
        for _ in range(2):  # the first fills the cache
            warm.append(run_child([*check, *cache], env=env, cwd=CORPUS, timeout_s=900))
    launches = sum(1 for line in cold[-1].stdout.splitlines()
                   if line.startswith("tests/test_suites/"))
    cold_s = statistics.median(r.wall_s for r in cold)
    pyrefly_s = statistics.median(r.wall_s for r in pyreflys)
    print(f"check of every launch in {NIGHTLY} vs one pyrefly check of the tree's nemo_rl "
          f"package (median of {RUNS}, alternating)")
    print_table(
        ("command", "median wall s", "median CPU s", "peak RSS MB", "runs wall s", "exit"),
        [
            ("pyrefly check nemo_rl/", round(pyrefly_s, 2),
             round(statistics.median(r.cpu_s for r in pyreflys), 2),
             round(max(r.max_rss_mb for r in pyreflys), 1),
             " ".join(f"{r.wall_s:.2f}" for r in pyreflys), pyreflys[-1].returncode),
            (f"check {NIGHTLY} --no-cache", round(cold_s, 2),
             round(statistics.median(r.cpu_s for r in cold), 2),
             round(max(r.max_rss_mb for r in cold), 1),
             " ".join(f"{r.wall_s:.2f}" for r in cold), cold[-1].returncode),
            (f"check {NIGHTLY}, cached (2nd run)", round(warm[-1].wall_s, 2),
             round(warm[-1].cpu_s, 2), round(warm[-1].max_rss_mb, 1),
             " ".join(f"{r.wall_s:.2f}" for r in warm), warm[-1].returncode),
        ],
    )
    cost = round(ratio(cold_s, pyrefly_s), 2)
    print(f"{launches} launches judged; check / pyrefly check: {cost}x wall cold, "
          f"{ratio(warm[-1].wall_s, pyrefly_s):.2f}x cached")
    return {"name": "launches", "launches": launches, "check_over_pyrefly": cost,
            "check_s": cold_s, "pyrefly_s": pyrefly_s, "cached_s": warm[-1].wall_s}


if __name__ == "__main__":
    main()
